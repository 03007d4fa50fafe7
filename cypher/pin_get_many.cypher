// name: pin_get_many
// returns: one row {node_id} per id that names a pinned node of the tenant
// purpose: which of these nodes are pinned (their session's PINNED relationship to them)
// params: node_ids, tenant
UNWIND $node_ids AS node_id
MATCH (s:Session {tenant: $tenant})-[:PINNED]->(n:Node {id: node_id, tenant: $tenant})
RETURN n.id AS node_id
