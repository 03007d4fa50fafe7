// name: bench_node_shape
// returns: one row {id, props, out} per id: property names with their value types, and outgoing edge types
// purpose: bench-only: compares bulk-loaded nodes with nodes append_message wrote
// params: node_ids, tenant
UNWIND $node_ids AS node_id
MATCH (n:Node {id: node_id, tenant: $tenant})
RETURN n.id AS id,
  [k IN keys(n) | k + ':' + valueType(n[k])] AS props,
  [(n)-[r]->() | type(r)] AS out
