// name: branch_name_set
// returns: one row {problem, session_id, name, events}; no row when the node does not exist for the tenant
// purpose: names the branch a tip ends (replacing its name, if any): a NAMES relationship from its session to the tip carries the name, which follows the branch as it grows (node_write); announces branch_named; HEAD untouched
// params: tip_id, tenant, name, now
// A name is data about a branch, not part of a node: nodes stay immutable. A session holds
// a name once, so a name picks one live branch.
MATCH (tip:Node {id: $tip_id, tenant: $tenant})
MATCH (s:Session {id: tip.session_id, tenant: $tenant})
// include: session_write_lock
WITH s, tip,
  CASE
    WHEN tip.deleted_at IS NOT NULL THEN 'node_deleted'
    WHEN tip.role = 'summary' OR tip.side_branch THEN 'tip_not_a_branch'
    WHEN EXISTS {
      (tip)<-[:PREDECESSOR]-(c:Node)
      WHERE c.deleted_at IS NULL AND c.role <> 'summary' AND NOT c.side_branch
    } THEN 'tip_not_a_tip'
    WHEN EXISTS { (s)-[other:NAMES]->(o:Node) WHERE other.name = $name AND o <> tip }
      THEN 'branch_name_taken'
  END AS problem
OPTIONAL CALL (s, tip, problem) {
  WITH * WHERE problem IS NULL
  MERGE (s)-[named:NAMES]->(tip)
  SET named.name = $name, named.named_at = $now
  RETURN named.name AS name
}
WITH s, tip, problem, name, CASE WHEN problem IS NULL
  THEN [{type: 'branch_named', tip_id: tip.id, name: name}] ELSE [] END AS announced
// include: events_write
RETURN problem, s.id AS session_id, name, events
