// name: session_calls_many
// returns: up to $limit rows {session_id, call} per session, oldest first; read_ids are not loaded
// purpose: the model calls of sessions
// params: session_ids, tenant, limit
UNWIND $session_ids AS session_id
CALL (session_id) {
  MATCH (c:Call {session_id: session_id, tenant: $tenant})
  RETURN c
  ORDER BY c.started_at, c.id
  LIMIT $limit
}
RETURN session_id, c {.*, output_id: [(c)-[:PRODUCED]->(o:Node) | o.id][0]} AS call
