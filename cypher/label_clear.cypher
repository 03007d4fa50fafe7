// name: label_clear
// returns: one row {problem, session_id, cleared, events}; no row when the node does not exist for the tenant
// purpose: removes a node's label (its session's LABELED relationship); announces node_unlabeled when there was one, and writes nothing when there was none or the node was deleted with its branch; HEAD untouched
// params: node_id, tenant, now
MATCH (n:Node {id: $node_id, tenant: $tenant})
MATCH (s:Session {id: n.session_id, tenant: $tenant})
// include: session_write_lock
// A node deleted with its branch keeps its label, as it keeps everything else.
WITH s, n, CASE WHEN n.deleted_at IS NOT NULL THEN 'node_deleted' END AS problem
OPTIONAL MATCH (s)-[l:LABELED]->(n)
WITH s, n, problem, l, problem IS NULL AND l IS NOT NULL AS cleared
CALL (l, cleared) {
  WITH * WHERE cleared
  DELETE l
}
WITH s, n, problem, cleared, CASE WHEN cleared
  THEN [{type: 'node_unlabeled', node_id: n.id}] ELSE [] END AS announced
// include: events_write
RETURN problem, s.id AS session_id, cleared, events
