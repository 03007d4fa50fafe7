// name: session_calls
// returns: up to $limit rows {call}, oldest first; read_ids are not loaded
// purpose: the model calls of a session
// params: session_id, tenant, limit
MATCH (c:Call {session_id: $session_id, tenant: $tenant})
RETURN c {.*, output_id: [(c)-[:PRODUCED]->(o:Node) | o.id][0]} AS call
ORDER BY c.started_at, c.id
LIMIT $limit
