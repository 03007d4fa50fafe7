// name: check_session
// returns: zero or one row {violations, session, nodes, calls}: the broken storage invariants, and every record's properties for the caller to check by the API's rules
// purpose: the ledger's invariants, checked on stored data (tests run it after every scenario)
// params: session_id, tenant
// The invariants are a fragment so an import can check what it wrote in its own transaction.
// Property values (metadata JSON, byte limits) are checked in Python, by the rules the
// API's writes and an import apply (service/store/records.py).
MATCH (s:Session {id: $session_id, tenant: $tenant})
OPTIONAL CALL (s) {
  // include: check_session_invariants
}
WITH s, collect(violation) AS violations
RETURN violations, properties(s) AS session,
  COLLECT { MATCH (n:Node {session_id: s.id}) RETURN properties(n) AS node ORDER BY n.seq, n.id } AS nodes,
  COLLECT { MATCH (c:Call {session_id: s.id}) RETURN properties(c) AS call ORDER BY c.started_at, c.id } AS calls
