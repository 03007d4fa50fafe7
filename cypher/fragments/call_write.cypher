// fragment call_write: records $call (if given) as a Call node with a READ edge, carrying its
// position, to every node its prompt contained, PRODUCED to `produced` (may be null), and
// OFFERED to the tools it was offered ($call.tools, stored once per tenant and content hash).
// Expects `s`, `produced` and `call_reads` (from call_reads_check, all found) in scope.
CALL (s, produced, call_reads) {
  WITH * WHERE $call IS NOT NULL
  CREATE (c:Call {
    id: $call.id, session_id: s.id, tenant: s.tenant, purpose: $call.purpose,
    provider: $call.provider, model: $call.model, head_id: $call.head_id,
    started_at: $call.started_at, finished_at: $call.finished_at,
    input_tokens: $call.input_tokens, output_tokens: $call.output_tokens,
    error_code: $call.error_code, error_message: $call.error_message,
    read_count: size($call.read_ids), tools_sha256: $call.tools_sha256
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
}
