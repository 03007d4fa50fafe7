// name: call_reads
// returns: one row {position, node} per node the call's prompt contained, in prompt order
// purpose: what a call read, with content (deleted nodes included: provenance is never lost)
// params: call_id, tenant
MATCH (c:Call {id: $call_id, tenant: $tenant})-[r:READ]->(n:Node)
RETURN r.position AS position,
  // include: node_map
  AS node
ORDER BY position
