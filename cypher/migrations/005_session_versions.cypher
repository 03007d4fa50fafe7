// Every session property a write reads under the session's lock exists from the session's
// creation on (session_create sets them). A statement positioned on the session node before
// a concurrent write committed could miss a property that write added: concurrent metadata
// saves lost a key when the first of them created meta_version (session_write_lock).
MATCH (s:Session) WHERE s.meta_version IS NULL SET s.meta_version = 0;
MATCH (s:Session) WHERE s.summary_version IS NULL SET s.summary_version = 0
