// name: draft_open
// returns: one row {draft}: the draft as stored; no row when the session does not exist
// purpose: stores a turn's draft (beginTurn): what its request holds and where its reply goes, until it expires; forgets the session's drafts that have expired
// params: session_id, tenant, draft, now
// A draft holds no relationship into the conversation: its reads and its tip are ids. Its
// only relationships are ATTEMPT edges to the calls completeTurn recorded for it, so a
// draft forgotten (DETACH DELETE) leaves the ledger exactly as it was.
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_write_lock
WITH s
CALL (s) {
  MATCH (expired:Draft)
  WHERE expired.session_id = s.id AND expired.expires_at <= $now AND expired.tenant = s.tenant
  DETACH DELETE expired
}
CREATE (d:Draft)
SET d = $draft, d.session_id = s.id, d.tenant = s.tenant, d.created_at = $now
RETURN d {.*} AS draft
