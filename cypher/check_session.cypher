// name: check_session
// returns: zero or one row {violations, session, nodes, calls, edges, media, labels, branch_names, pins}: the broken storage invariants, and every record's properties (with the tool and media edges of the nodes holding blocks, and the media they carry) for the caller to check by the API's rules
// purpose: the ledger's invariants, checked on stored data (tests run it after every scenario)
// params: session_id, tenant
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
RETURN violations, properties(s) AS session,
  COLLECT { MATCH (n:Node {session_id: s.id}) RETURN properties(n) AS node ORDER BY n.seq, n.id } AS nodes,
  COLLECT { MATCH (c:Call {session_id: s.id}) RETURN properties(c) AS call ORDER BY c.started_at, c.id } AS calls,
  COLLECT {
    MATCH (n:Node {session_id: s.id})
    USING INDEX n:Node(session_id)
    WHERE n.blocks IS NOT NULL OR EXISTS { (n)-[:USES|ANSWERS|CARRIES]->() }
    RETURN {
      id: n.id,
      uses: COLLECT { MATCH (n)-[u:USES]->(t:ToolUse) RETURN {id: t.id, name: t.name} AS use ORDER BY u.order },
      answers: COLLECT { MATCH (n)-[a:ANSWERS]->(t:ToolUse) RETURN {id: t.id, is_error: a.is_error} AS answer ORDER BY t.id },
      carries: COLLECT { MATCH (n)-[:CARRIES]->(m) RETURN m.sha256 AS sha256 ORDER BY sha256 }
    } AS edges
    ORDER BY n.seq, n.id
  } AS edges,
  COLLECT {
    MATCH (carrier:Node {session_id: s.id})-[:CARRIES]->(m:Media)
    USING INDEX carrier:Node(session_id)
    RETURN DISTINCT properties(m) AS medium
  } AS media,
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
