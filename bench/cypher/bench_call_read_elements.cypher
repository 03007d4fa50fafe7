// name: bench_call_read_elements
// returns: one row {element_ids}: the element ids of the nodes a call read, in prompt order
// purpose: bench-only (workload 8): what the floor's reply reads, the same nodes as the turn's call
// params: call_id, tenant
MATCH (c:Call {id: $call_id, tenant: $tenant})-[r:READ]->(n:Node)
WITH n, r.position AS position ORDER BY position
RETURN collect(elementId(n)) AS element_ids
