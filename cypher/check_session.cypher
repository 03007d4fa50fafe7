// name: check_session
// returns: one row {violation} per broken storage invariant of the session; none when it is sound
// purpose: the ledger's invariants, checked on stored data (tests run it after every scenario)
// params: session_id, tenant
// The invariants are a fragment so an import can check what it wrote in its own transaction.
MATCH (s:Session {id: $session_id, tenant: $tenant})
CALL (s) {
  // include: check_session_invariants
}
RETURN violation
