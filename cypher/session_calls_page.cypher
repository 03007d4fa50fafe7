// name: session_calls_page
// returns: one row {session_id, total, calls} per session: up to $limit calls in the order read (oldest first, or newest first when $from_end); read_ids are not loaded
// purpose: a page of each session's model calls between (started_at, id) cursors (service/store/paging.py)
// params: session_ids, tenant, after_key, after_id, before_key, before_id, from_end, limit
UNWIND $session_ids AS session_id
CALL (session_id) {
  MATCH (c:Call {session_id: session_id, tenant: $tenant})
  WHERE ($after_key IS NULL OR c.started_at > $after_key
         OR (c.started_at = $after_key AND c.id > $after_id))
    AND ($before_key IS NULL OR c.started_at < $before_key
         OR (c.started_at = $before_key AND c.id < $before_id))
  WITH c
  ORDER BY CASE WHEN $from_end THEN c.started_at END DESC, CASE WHEN $from_end THEN c.id END DESC,
           c.started_at, c.id
  LIMIT $limit
  RETURN collect(c {.*, output_id: [(c)-[:PRODUCED]->(o:Node) | o.id][0]}) AS calls
}
RETURN session_id, calls, COUNT { MATCH (x:Call {session_id: session_id, tenant: $tenant}) } AS total
