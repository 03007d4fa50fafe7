// name: set_head
// returns: one row {problem, previous_head_id, head_id, events}
// purpose: the explicit HEAD move (checkout, or rewind when $require_ancestor) — no other statement moves HEAD onto an existing node
// params: session_id, tenant, node_id, require_ancestor, now
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_write_lock
WITH s
MATCH (s)-[h:HEAD]->(old:Node)
OPTIONAL MATCH (n:Node {id: $node_id, tenant: $tenant})
WITH s, h, old, n,
  CASE
    WHEN n IS NULL THEN 'node_not_found'
    WHEN n.session_id <> s.id THEN 'node_other_session'
    WHEN n.deleted_at IS NOT NULL THEN 'node_deleted'
    WHEN n.role = 'summary' THEN 'node_summary'
    WHEN $require_ancestor AND NOT EXISTS { (old)-[:PREDECESSOR*0..]->(n) } THEN 'not_an_ancestor'
  END AS problem
OPTIONAL CALL (s, h, old, n, problem) {
  WITH * WHERE problem IS NULL AND n <> old
  DELETE h
  CREATE (s)-[:HEAD]->(n)
  RETURN true AS moved
}
WITH s, old, n, problem, CASE WHEN problem IS NULL AND n <> old
  THEN [{type: 'head_moved', previous_head_id: old.id, head_id: n.id}] ELSE [] END AS announced
// include: events_write
RETURN problem, old.id AS previous_head_id, CASE WHEN problem IS NULL THEN n.id ELSE old.id END AS head_id,
  events
