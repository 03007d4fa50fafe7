// name: append_message
// returns: one row {problem, head_moved, node}; node is null when problem is set
// purpose: appends a node after its predecessor (default: HEAD); HEAD advances only when the predecessor is HEAD and the writer's policy allows it
// params: session_id, tenant, node_id, role, content, tokens, metadata, now, predecessor_id, caller_id, side_branch, advance_head
// The SET on the session takes its write lock first, so HEAD is read after any
// concurrent append has committed: of two appends on the same HEAD exactly one advances it.
MATCH (s:Session {id: $session_id, tenant: $tenant})
SET s.next_seq = s.next_seq + 1, s.updated_at = $now
WITH s, s.next_seq - 1 AS seq
MATCH (s)-[:HEAD]->(head:Node)
OPTIONAL MATCH (pred:Node {id: coalesce($predecessor_id, head.id), tenant: $tenant})
OPTIONAL MATCH (caller:Node {id: $caller_id, tenant: $tenant})
WITH s, seq, head, pred, caller,
  CASE
    WHEN pred IS NULL THEN 'predecessor_not_found'
    WHEN pred.session_id <> s.id THEN 'predecessor_other_session'
    WHEN pred.deleted_at IS NOT NULL THEN 'predecessor_deleted'
    WHEN pred.role = 'summary' THEN 'predecessor_summary'
    WHEN $caller_id IS NOT NULL AND caller IS NULL THEN 'caller_not_found'
    WHEN caller.session_id <> s.id THEN 'caller_other_session'
    WHEN caller.deleted_at IS NOT NULL THEN 'caller_deleted'
  END AS problem
OPTIONAL CALL (s, seq, head, pred, caller, problem) {
  WITH * WHERE problem IS NULL
  CREATE (n:Node {
    id: $node_id, session_id: s.id, tenant: s.tenant, role: $role, content: $content,
    created_at: $now, tokens: $tokens, metadata: $metadata, seq: seq,
    depth: pred.depth + 1, side_branch: $side_branch OR pred.side_branch
  })
  CREATE (n)-[:PREDECESSOR]->(pred)
  FOREACH (c IN CASE WHEN caller IS NULL THEN [] ELSE [caller] END | CREATE (n)-[:CALLER]->(c))
  WITH s, head, pred, n
  OPTIONAL CALL (s, head, pred, n) {
    WITH * WHERE pred = head AND $advance_head
    MATCH (s)-[h:HEAD]->(:Node)
    DELETE h
    CREATE (s)-[:HEAD]->(n)
    RETURN true AS advanced
  }
  RETURN n, coalesce(advanced, false) AS head_moved
}
RETURN problem, head_moved,
  CASE WHEN n IS NULL THEN null ELSE n {.*, predecessor_id: pred.id, caller_id: caller.id} END AS node
