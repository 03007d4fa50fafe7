// name: pin_clear
// returns: one row {problem, session_id, cleared, events}; no row when the node does not exist for the tenant
// purpose: unpins a node (deletes its session's PINNED relationship); when it was pinned, moves summary_version and announces node_unpinned; writes nothing when it was not, or was deleted with its branch; HEAD untouched
// params: node_id, tenant, now
MATCH (n:Node {id: $node_id, tenant: $tenant})
MATCH (s:Session {id: n.session_id, tenant: $tenant})
// include: session_write_lock
// A node deleted with its branch keeps its pin, as it keeps everything else.
WITH s, n, CASE WHEN n.deleted_at IS NOT NULL THEN 'node_deleted' END AS problem
OPTIONAL MATCH (s)-[p:PINNED]->(n)
WITH s, n, problem, p, problem IS NULL AND p IS NOT NULL AS cleared
CALL (s, p, cleared) {
  WITH * WHERE cleared
  DELETE p
  SET s.summary_version = coalesce(s.summary_version, 0) + 1
}
WITH s, n, problem, cleared, CASE WHEN cleared
  THEN [{type: 'node_unpinned', node_id: n.id}] ELSE [] END AS announced
// include: events_write
RETURN problem, s.id AS session_id, cleared, events
