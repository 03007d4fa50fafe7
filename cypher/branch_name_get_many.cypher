// name: branch_name_get_many
// returns: one row {node_id, name} per id that names a named branch tip of the tenant
// purpose: the names of the branches tips end (the name on their session's NAMES relationship)
// params: node_ids, tenant
UNWIND $node_ids AS node_id
MATCH (s:Session {tenant: $tenant})-[named:NAMES]->(n:Node {id: node_id, tenant: $tenant})
RETURN n.id AS node_id, named.name AS name
