// name: session_update
// returns: zero or one row {session}; none when the session is missing or meta_version moved
// purpose: sets title and the user's extra_meta; optimistic on meta_version so merges never lose a key
// params: session_id, tenant, title, set_title, extra_meta, expected_meta_version, now
MATCH (s:Session {id: $session_id, tenant: $tenant})
WHERE coalesce(s.meta_version, 0) = $expected_meta_version
SET s.title = CASE WHEN $set_title THEN $title ELSE s.title END,
    s.extra_meta = coalesce($extra_meta, s.extra_meta),
    s.meta_version = coalesce(s.meta_version, 0) + 1,
    s.updated_at = $now
WITH s
MATCH (s)-[:ROOT]->(r:Node)
MATCH (s)-[:HEAD]->(h:Node)
RETURN s {.*, root_id: r.id, head_id: h.id} AS session
