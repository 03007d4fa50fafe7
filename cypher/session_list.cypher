// name: session_list
// returns: up to $limit rows {session}, in the order read (newest first, or oldest first when $from_end)
// purpose: a page of the tenant's sessions the filter keeps (session_filter), newest first by creation or, when $order is 'last_activity', by last activity, between (time, id) cursors (service/store/paging.py)
// params: tenant, order, tool, project, text, since, until, after_key, after_id, before_key, before_id, from_end, limit
MATCH (s:Session {tenant: $tenant})
// include: session_filter
WITH s, CASE WHEN $order = 'last_activity' THEN s.last_activity_at ELSE s.created_at END AS key
WHERE ($after_key IS NULL OR key < $after_key OR (key = $after_key AND s.id < $after_id))
  AND ($before_key IS NULL OR key > $before_key OR (key = $before_key AND s.id > $before_id))
WITH s, key
ORDER BY CASE WHEN $from_end THEN key END, CASE WHEN $from_end THEN s.id END,
         key DESC, s.id DESC
LIMIT $limit
MATCH (s)-[:ROOT]->(r:Node)
MATCH (s)-[:HEAD]->(h:Node)
RETURN s {
  .*, root_id: r.id, head_id: h.id,
  active_summary: [(s)-[:ACTIVE_SUMMARY]->(a:Node) | a {.id, .content}][0]
} AS session
ORDER BY CASE WHEN $from_end THEN key END, CASE WHEN $from_end THEN s.id END,
         key DESC, s.id DESC
