// fragment check_session_page: after the MATCH of the session `s`, a page of its nodes: the
// first $page in (seq, id) order after ($after_seq, $after_id) (the last node of the page
// before; the least integer and '' for the first page), as `nodes` (their properties),
// `edges` (the tool and media edges of those holding blocks or edges) and `media` (what
// they carry), so that checking a session of any length never returns all its nodes in
// one result (check_session, check_session_nodes). The page is read from the
// (session_id, seq) index in its order: its cost does not grow with the session. A node
// whose seq is not a number is on no page (the check counts them).
CALL (s) {
  MATCH (n:Node {session_id: s.id})
  USING INDEX n:Node(session_id, seq)
  WHERE n.seq >= $after_seq AND (n.seq > $after_seq OR n.id > $after_id)
  // Ordered by the index's keys, so that Neo4j reads it in its order and stops at the page.
  WITH n ORDER BY n.session_id, n.seq, n.id LIMIT $page
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
