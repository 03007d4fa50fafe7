// name: calls_reading
// returns: up to $limit rows {call, position}, newest first; read_ids are not loaded
// purpose: which calls read a node, and where in their prompts (walks the node's READ edges only)
// params: node_id, tenant, limit
MATCH (n:Node {id: $node_id, tenant: $tenant})<-[r:READ]-(c:Call)
RETURN c {.*, output_id: [(c)-[:PRODUCED]->(o:Node) | o.id][0]} AS call, r.position AS position
ORDER BY c.started_at DESC, c.id DESC
LIMIT $limit
