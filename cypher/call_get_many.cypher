// name: call_get_many
// returns: one row {call} per id that exists for the tenant, with read_ids in prompt order
// purpose: calls by id, for lookups, diffs and batched loaders
// params: call_ids, tenant
UNWIND $call_ids AS call_id
MATCH (c:Call {id: call_id, tenant: $tenant})
RETURN c {
  .*,
  read_ids: COLLECT { MATCH (c)-[r:READ]->(n:Node) RETURN n.id ORDER BY r.position },
  output_id: [(c)-[:PRODUCED]->(o:Node) | o.id][0]
} AS call
