// name: branch_name_clear
// returns: one row {problem, session_id, cleared, events}; no row when the node does not exist for the tenant
// purpose: removes the name of the branch a tip ends (its session's NAMES relationship); announces branch_unnamed when it had one, and writes nothing when it had none (a deleted branch has none: BAD_INPUT); HEAD untouched
// params: tip_id, tenant, now
MATCH (tip:Node {id: $tip_id, tenant: $tenant})
MATCH (s:Session {id: tip.session_id, tenant: $tenant})
// include: session_write_lock
WITH s, tip, CASE WHEN tip.deleted_at IS NOT NULL THEN 'node_deleted' END AS problem
OPTIONAL MATCH (s)-[named:NAMES]->(tip)
WITH s, tip, problem, named, problem IS NULL AND named IS NOT NULL AS cleared
CALL (named, cleared) {
  WITH * WHERE cleared
  DELETE named
}
WITH s, tip, problem, cleared, CASE WHEN cleared
  THEN [{type: 'branch_unnamed', tip_id: tip.id}] ELSE [] END AS announced
// include: events_write
RETURN problem, s.id AS session_id, cleared, events
