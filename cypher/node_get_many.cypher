// name: node_get_many
// returns: one row {node} per id that exists for the tenant (deleted nodes included, flagged); a node of an import in parts not yet finished belongs to no session and is left out
// purpose: nodes by id, for lookups and batched loaders
// params: node_ids, tenant
UNWIND $node_ids AS node_id
MATCH (n:Node {id: node_id, tenant: $tenant})
WHERE EXISTS { (:Session {id: n.session_id, tenant: $tenant}) }
RETURN
  // include: node_map
  AS node
