// name: transcript_import_session
// returns: one row {problem, session_elsewhere, taken_ids, taken_elsewhere, missing_media, created, violations}; nothing is created when problem is set
// purpose: the last transaction of a large transcript's first import (service/store/transcript_parts.py): while the import's claim is still $token's, ends the claim and creates the session of the nodes its transcript_import_part statements wrote with its labels, tool set and ROOT, HEAD and active summary edges, then counts what the session holds and checks its invariants, as backup_import does for a document imported at once
// params: tenant, token, session, calls, tool_sets, tool_set_versions, labels, branch_names, pins
CYPHER replan=skip
// Planning this statement takes seconds on a cold JVM, and Neo4j plans it again whenever
// the store's statistics have moved enough: its plan is index seeks by id, kept.
// The claim is locked before its token is read (transcript_import_part).
OPTIONAL MATCH (claim:PendingImport {session_id: $session.properties.id})
CALL (claim) {
  WITH claim WHERE claim IS NOT NULL
  SET claim.touched_at = datetime()
}
WITH claim, coalesce(claim.token = $token, false) AS claimed
WITH claim, claimed, COLLECT { MATCH (x:Session {id: $session.properties.id}) RETURN coalesce(x.tenant = $tenant, false) AS own } AS taken_sessions
WITH claim, taken_sessions,
  CASE
    WHEN NOT claimed THEN 'import_taken_over'
    WHEN size(taken_sessions) > 0 THEN 'session_exists'
  END AS problem
OPTIONAL CALL (problem, claim) {
  WITH * WHERE problem IS NULL
  DELETE claim
  WITH 1 AS claimed
  // include: session_create
  WITH s
  // include: session_finish
}
RETURN problem, any(own IN taken_sessions WHERE NOT own) AS session_elsewhere,
  [] AS taken_ids, 0 AS taken_elsewhere, [] AS missing_media, created, violations
