// name: session_list
// returns: up to $limit rows {session}, newest first
// purpose: a page of the tenant's sessions after a (created_at, id) cursor
// params: tenant, after_created_at, after_id, limit
MATCH (s:Session {tenant: $tenant})
WHERE $after_created_at IS NULL
   OR s.created_at < $after_created_at
   OR (s.created_at = $after_created_at AND s.id < $after_id)
WITH s
ORDER BY s.created_at DESC, s.id DESC
LIMIT $limit
MATCH (s)-[:ROOT]->(r:Node)
MATCH (s)-[:HEAD]->(h:Node)
RETURN s {
  .*, root_id: r.id, head_id: h.id,
  active_summary: [(s)-[:ACTIVE_SUMMARY]->(a:Node) WHERE a.deleted_at IS NULL | a {.id, .content}][0]
} AS session
ORDER BY s.created_at DESC, s.id DESC
