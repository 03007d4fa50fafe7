// name: node_get_many
// returns: one row {node} per id that exists for the tenant (deleted nodes included, flagged)
// purpose: nodes by id, for lookups and batched loaders
// params: node_ids, tenant
UNWIND $node_ids AS node_id
MATCH (n:Node {id: node_id, tenant: $tenant})
RETURN
  // include: node_map
  AS node
