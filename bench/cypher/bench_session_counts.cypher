// name: bench_session_counts
// returns: one row {nodes, covers, absorbed, reads}
// purpose: bench-only: what a session stores — its nodes, the COVERS and ABSORBED edges of its summaries, the READ edges of its calls
// params: session_id
CALL () {
  MATCH (n:Node {session_id: $session_id})
  RETURN count(n) AS nodes
}
CALL () {
  MATCH (:Node {session_id: $session_id})-[c:COVERS]->()
  RETURN count(c) AS covers
}
CALL () {
  MATCH (:Node {session_id: $session_id})-[a:ABSORBED]->()
  RETURN count(a) AS absorbed
}
CALL () {
  MATCH (:Call {session_id: $session_id})-[r:READ]->()
  RETURN count(r) AS reads
}
RETURN nodes, covers, absorbed, reads
