// name: transcript_session_held
// returns: one row {held: true, source} when the tenant holds the session; none otherwise
// purpose: whether a transcript's session is stored already, so a folder import checks a new session's document (in a worker thread, while the store writes the file before it) only when it will be imported whole; and its source (what an import last said it came from: the bytes of the file it read), so a large file grown since is read as a growth a part at a time
// params: tenant, session_id
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN true AS held, s.source AS source
