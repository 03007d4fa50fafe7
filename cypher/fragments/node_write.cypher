// fragment node_write: unless `problem` is set, writes node `n` ($node_id, $role, $content,
// $thinking (its thinking blocks' text, for search), $tokens, $metadata, its $blocks text, the ids of the tool uses it opens and answers, created at
// $now, with what blocks_write adds) at `seq` after `pred`, with a CALLER edge to `caller`
// and `fork_of` = `fork_id` when they are not null, on a side branch when `side_branch` or
// `pred` is on one (else it takes over `pred`'s branch name, if any); moves HEAD onto it
// when `moves_head` (the including statement decides, after session_lock); and records
// $call as the model call that produced it.
// Expects s, seq, pred, caller, fork_id, side_branch, moves_head, problem and call_reads
// (call_reads_check) in scope; binds
// `n` and `head_moved` (both null when problem is set).
OPTIONAL CALL (s, seq, pred, caller, fork_id, side_branch, moves_head, problem, call_reads) {
  WITH * WHERE problem IS NULL
  CREATE (n:Node {
    id: $node_id, session_id: s.id, tenant: s.tenant, role: $role, content: $content,
    thinking: $thinking,
    created_at: $now, tokens: $tokens, metadata: $metadata, seq: seq, blocks: $blocks,
    tool_use_ids: CASE WHEN size($tool_uses) > 0 THEN [u IN $tool_uses | u.id] END,
    answered_ids: CASE WHEN size($answers) > 0 THEN $answers END,
    depth: pred.depth + 1, side_branch: side_branch OR pred.side_branch, fork_of: fork_id,
    // A result of a reply no render reads is not read either (an imported aborted reply).
    out_of_context: CASE WHEN $role = 'tool' AND pred.out_of_context THEN true END
  })
  CREATE (n)-[:PREDECESSOR]->(pred)
  WITH *
  // A branch's name follows its growth: the first user turn after a named tip takes it.
  CALL (s, n, pred) {
    WITH * WHERE NOT n.side_branch
    MATCH (s)-[named:NAMES]->(pred)
    CREATE (s)-[moved:NAMES]->(n)
    SET moved = properties(named)
    DELETE named
  }
  FOREACH (c IN CASE WHEN caller IS NULL THEN [] ELSE [caller] END | CREATE (n)-[:CALLER]->(c))
  // include: blocks_write
  WITH s, n, moves_head, call_reads
  CALL (s, n, moves_head) {
    WITH * WHERE moves_head
    MATCH (s)-[h:HEAD]->(:Node)
    DELETE h
    CREATE (s)-[:HEAD]->(n)
  }
  WITH s, n, moves_head AS head_moved, n AS produced, call_reads
  // include: call_write
  RETURN n, head_moved
}
