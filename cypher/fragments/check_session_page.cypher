// fragment check_session_page: after the MATCH of the session `s`, its nodes at positions
// [$skip, $skip + $page) in (seq, id) order, a page of them, as `nodes` (their
// properties), `edges` (the tool and media edges of those holding blocks or edges) and
// `media` (what they carry), so that checking a session of any length never returns all
// its nodes in one result (check_session, check_session_nodes).
CALL (s) {
  MATCH (n:Node {session_id: s.id})
  USING INDEX n:Node(session_id)
  WITH n ORDER BY n.seq, n.id SKIP $skip LIMIT $page
  RETURN collect(properties(n)) AS nodes,
    collect(CASE WHEN n.blocks IS NOT NULL OR EXISTS { (n)-[:USES|ANSWERS|CARRIES]->() } THEN {
      id: n.id,
      uses: COLLECT { MATCH (n)-[u:USES]->(t:ToolUse) RETURN {id: t.id, name: t.name} AS use ORDER BY u.order },
      answers: COLLECT { MATCH (n)-[a:ANSWERS]->(t:ToolUse) RETURN {id: t.id, is_error: a.is_error} AS answer ORDER BY t.id },
      carries: COLLECT { MATCH (n)-[:CARRIES]->(m) RETURN m.sha256 AS sha256 ORDER BY sha256 }
    } END) AS edges,
    collect(n) AS page
}
WITH *, COLLECT {
  UNWIND page AS carrier
  MATCH (carrier)-[:CARRIES]->(m:Media)
  RETURN DISTINCT properties(m) AS medium
} AS media
