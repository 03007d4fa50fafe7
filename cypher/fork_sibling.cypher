// name: fork_sibling
// returns: one row {problem, previous_head_id, node}; node is null when problem is set
// purpose: retry/edit: a new sibling of a reply or user message (same predecessor), and HEAD moves onto it
// params: node_id, tenant, new_id, expected_role, content, tokens, metadata, now
MATCH (orig:Node {id: $node_id, tenant: $tenant})
MATCH (s:Session {id: orig.session_id, tenant: $tenant})
SET s.next_seq = s.next_seq + 1, s.updated_at = $now
WITH s, s.next_seq - 1 AS seq, orig
MATCH (s)-[h:HEAD]->(old:Node)
OPTIONAL MATCH (orig)-[:PREDECESSOR]->(pred:Node)
WITH s, seq, orig, h, old, pred,
  CASE
    WHEN orig.deleted_at IS NOT NULL THEN 'node_deleted'
    WHEN pred IS NULL THEN 'node_is_root'
    WHEN orig.role <> $expected_role AND $expected_role = 'assistant' THEN 'wrong_role_retry'
    WHEN orig.role <> $expected_role THEN 'wrong_role_edit'
  END AS problem
OPTIONAL CALL (s, seq, orig, h, pred, problem) {
  WITH * WHERE problem IS NULL
  CREATE (n:Node {
    id: $new_id, session_id: s.id, tenant: s.tenant, role: orig.role, content: $content,
    created_at: $now, tokens: $tokens, metadata: $metadata, seq: seq,
    depth: orig.depth, side_branch: orig.side_branch, fork_of: orig.id
  })
  CREATE (n)-[:PREDECESSOR]->(pred)
  DELETE h
  CREATE (s)-[:HEAD]->(n)
  RETURN n
}
RETURN problem, s.id AS session_id, old.id AS previous_head_id,
  CASE WHEN n IS NULL THEN null ELSE n {.*, predecessor_id: pred.id, caller_id: null} END AS node
