// name: check_session
// returns: zero or one row {violations, session, nodes, edges, media, node_count, calls, labels, branch_names, pins}: the broken storage invariants, and every record's properties for the caller to check by the API's rules: the session's, its calls', its labels', names' and pins', and of its nodes the first page of $page in (seq, id) order after ($after_seq, $after_id) (with the tool and media edges of those holding blocks, and the media they carry: check_session_nodes reads the next pages)
// purpose: the ledger's invariants, checked on stored data (tests run it after every scenario)
// params: session_id, tenant, after_seq, after_id, page
// The invariants are a fragment so an import can check what it wrote in its own transaction.
// Property values (metadata JSON, byte limits) and what only a node's blocks say (tool
// names, error flags, the media it names) are checked in Python, by the rules the API's
// writes and an import apply (service/store/records.py).
MATCH (s:Session {id: $session_id, tenant: $tenant})
OPTIONAL CALL (s) {
  // include: check_session_invariants
  UNION ALL
  // include: check_session_events
}
WITH s, collect(violation) AS violations
// include: check_session_page
RETURN violations, properties(s) AS session, nodes, edges, media,
  COUNT { MATCH (n:Node {session_id: s.id}) } AS node_count,
  COLLECT { MATCH (c:Call {session_id: s.id}) RETURN properties(c) AS call ORDER BY c.started_at, c.id } AS calls,
  COLLECT {
    MATCH (s)-[l:LABELED]->(n)
    RETURN {node_id: n.id, node_session_id: n.session_id, properties: l {.text, .labeled_at}} AS label
    ORDER BY label.node_id
  } AS labels,
  COLLECT {
    MATCH (s)-[named:NAMES]->(n)
    RETURN {node_id: n.id, node_session_id: n.session_id, properties: properties(named)} AS name
    ORDER BY name.node_id
  } AS branch_names,
  COLLECT {
    MATCH (s)-[p:PINNED]->(n)
    RETURN {node_id: n.id, node_session_id: n.session_id, properties: properties(p)} AS pin
    ORDER BY pin.node_id
  } AS pins
