// name: label_get_many
// returns: one row {node_id, label} per id that names a labeled node of the tenant
// purpose: nodes' labels (the text on their session's LABELED relationship)
// params: node_ids, tenant
UNWIND $node_ids AS node_id
MATCH (s:Session {tenant: $tenant})-[l:LABELED]->(n:Node {id: node_id, tenant: $tenant})
RETURN n.id AS node_id, l.text AS label
