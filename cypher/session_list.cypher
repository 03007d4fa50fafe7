// name: session_list
// returns: up to $limit rows {session}, in the order read (newest first, or oldest first when $from_end)
// purpose: a page of the tenant's sessions, newest first, between (created_at, id) cursors (service/store/paging.py)
// params: tenant, after_key, after_id, before_key, before_id, from_end, limit
MATCH (s:Session {tenant: $tenant})
WHERE ($after_key IS NULL OR s.created_at < $after_key
       OR (s.created_at = $after_key AND s.id < $after_id))
  AND ($before_key IS NULL OR s.created_at > $before_key
       OR (s.created_at = $before_key AND s.id > $before_id))
WITH s
ORDER BY CASE WHEN $from_end THEN s.created_at END, CASE WHEN $from_end THEN s.id END,
         s.created_at DESC, s.id DESC
LIMIT $limit
MATCH (s)-[:ROOT]->(r:Node)
MATCH (s)-[:HEAD]->(h:Node)
RETURN s {
  .*, root_id: r.id, head_id: h.id,
  active_summary: [(s)-[:ACTIVE_SUMMARY]->(a:Node) | a {.id, .content}][0]
} AS session
ORDER BY CASE WHEN $from_end THEN s.created_at END, CASE WHEN $from_end THEN s.id END,
         s.created_at DESC, s.id DESC
