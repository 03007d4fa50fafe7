// name: bench_session_size
// returns: one row {nodes, calls, tool_uses, events, relationships}
// purpose: bench-only: what a session stores — its nodes (messages, summaries), calls, tool uses and events, and every relationship starting at one of them or at the session
// params: session_id
CALL () {
  MATCH (n:Node {session_id: $session_id})
  RETURN count(n) AS nodes, sum(COUNT { (n)-->() }) AS node_edges
}
CALL () {
  MATCH (c:Call {session_id: $session_id})
  RETURN count(c) AS calls, sum(COUNT { (c)-->() }) AS call_edges
}
CALL () {
  MATCH (t:ToolUse {session_id: $session_id})
  RETURN count(t) AS tool_uses, sum(COUNT { (t)-->() }) AS tool_use_edges
}
CALL () {
  MATCH (e:Event {session_id: $session_id})
  RETURN count(e) AS events, sum(COUNT { (e)-->() }) AS event_edges
}
CALL () {
  MATCH (s:Session {id: $session_id})
  RETURN COUNT { (s)-->() } AS session_edges
}
RETURN nodes, calls, tool_uses, events,
       node_edges + call_edges + tool_use_edges + event_edges + session_edges AS relationships
