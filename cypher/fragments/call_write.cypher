// fragment call_write: records $call (if given) as a Call node with a READ edge, carrying its
// position, to every node its prompt contained and then to every turn its recall results
// quote (the last $call.recalled_reads of its reads; docs/guides/recall.md), PRODUCED to `produced` (may be null), and
// OFFERED to the tools it was offered ($call.tools, stored once per tenant and content hash),
// and its shared prefix with the session's previous call (docs/concepts/provenance.md).
// Expects `s` (its write lock taken), `produced` and `call_reads` (from call_reads_check, all found) in scope.
CALL (s, produced, call_reads) {
  WITH * WHERE $call IS NOT NULL
  // The session's models, first use first (read under the session's write lock).
  SET s.models = CASE WHEN $call.model IS NULL OR $call.model IN coalesce(s.models, [])
                      THEN s.models ELSE coalesce(s.models, []) + $call.model END
  CREATE (c:Call {
    id: $call.id, session_id: s.id, tenant: s.tenant, purpose: $call.purpose,
    provider: $call.provider, model: $call.model, head_id: $call.head_id,
    started_at: $call.started_at, finished_at: $call.finished_at,
    input_tokens: $call.input_tokens, output_tokens: $call.output_tokens,
    error_code: $call.error_code, error_message: $call.error_message,
    read_count: size($call.read_ids), tools_sha256: $call.tools_sha256,
    cache_creation_input_tokens: $call.cache_creation_input_tokens,
    cache_read_input_tokens: $call.cache_read_input_tokens,
    recalled_reads: CASE WHEN $call.recalled_reads > 0 THEN $call.recalled_reads END
  })
  FOREACH (offered IN CASE WHEN $call.tools_sha256 IS NULL THEN [] ELSE [$call] END |
    MERGE (tools:ToolSet {tenant: s.tenant, sha256: offered.tools_sha256})
    ON CREATE SET tools.tools = offered.tools
    CREATE (c)-[:OFFERED]->(tools))
  FOREACH (p IN CASE WHEN produced IS NULL THEN [] ELSE [produced] END |
    CREATE (c)-[:PRODUCED]->(p))
  WITH c, call_reads
  CALL (c, call_reads) {
    UNWIND range(0, size(call_reads) - 1) AS position
    WITH c, position, call_reads[position] AS r
    CREATE (c)-[:READ {position: position}]->(r)
  }
  // The prompt's tokens as the ledger counts them (its reads' stored tokens and its tools'),
  // over the prompt's own reads: recalled turns (the last $call.recalled_reads) are counted
  // in the tool message quoting them.
  // and its shared prefix: the previous call (the session's call started last before this
  // one, found through call_session_started) and the reads both prompts hold at the same
  // positions from the start, up to the first difference; its tokens are the stored tokens
  // of those nodes, plus the tools' when both calls were offered the same ones. Tools come
  // first in a request: offered other tools, the prompts share nothing.
  WITH c, call_reads[0..size(call_reads) - coalesce($call.recalled_reads, 0)] AS prompt_reads
  CALL (c, prompt_reads) {
    // Ordered as the index call_session_started holds them, so the seek stops at the first
    // call before this one (PartialTop): the cost does not grow with the session's calls.
    OPTIONAL CALL (c) {
      MATCH (p:Call)
      WHERE p.session_id = c.session_id AND p.started_at <= $call.started_at
        AND p.id <> $call.id AND p.tenant = c.tenant
      RETURN p ORDER BY p.session_id DESC, p.started_at DESC, p.id DESC LIMIT 1
    }
    // (Every READ edge ends on a Node; the bound of p's prompt is read once, not per edge.)
    WITH c, prompt_reads, p, p.read_count - coalesce(p.recalled_reads, 0) AS p_prompt
    WITH c, prompt_reads, p,
      COLLECT { MATCH (p)-[r:READ]->(n)
                WITH n, r.position AS at WHERE at < p_prompt
                RETURN n ORDER BY at } AS before
    WITH c, prompt_reads, p, before,
      p IS NOT NULL AND coalesce(p.tools_sha256, '') = coalesce(c.tools_sha256, '') AS comparable,
      CASE WHEN size(before) < size(prompt_reads) THEN size(before) ELSE size(prompt_reads) END AS both
    WITH c, prompt_reads, p, comparable, CASE WHEN comparable
      THEN coalesce([i IN range(0, both - 1) WHERE before[i] <> prompt_reads[i]][0], both)
      ELSE 0 END AS shared
    // Each read's tokens are read once: the shared prefix's sum is a part of the prompt's.
    WITH c, p, comparable, shared, [n IN prompt_reads | n.tokens] AS tokens
    SET c.previous_call_id = p.id, c.shared_prefix_reads = shared,
      c.prompt_tokens = $call.tools_tokens + reduce(t = 0, k IN tokens | t + k),
      c.shared_prefix_tokens = CASE WHEN comparable
        THEN $call.tools_tokens + reduce(t = 0, k IN tokens[0..shared] | t + k)
        ELSE 0 END
  }
}
