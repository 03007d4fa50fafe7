// name: backup_export_calls
// returns: zero or one row {calls, next_seq, call_count}: a page of the session's calls as backup_export returns them (its first page), read on after the last of the page before
// purpose: a backup of a long session, read a page at a time (next_seq and call_count tell the session did not change meanwhile)
// params: session_id, tenant, call_after_started_at, call_after_id, call_page
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN
  // include: backup_export_calls
  AS calls,
  s.next_seq AS next_seq,
  COUNT { MATCH (c:Call {session_id: s.id}) } AS call_count
