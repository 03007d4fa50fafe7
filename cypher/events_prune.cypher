// name: events_prune
// returns: one row {pruned_through} when the session exists for the tenant
// purpose: forgets the session's events older than its newest $event_retention, as one batch (run after the write whose events reach a batch boundary, not by every write)
// params: session_id, tenant, now, event_retention
// Under the session's write lock, so the two counters it reads are the ones the last write
// committed and two prunes of one session cannot move events_pruned_through backwards.
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_write_lock
WITH s, s.next_event_seq - $event_retention AS forget_through
CALL (s, forget_through) {
  WITH * WHERE forget_through > s.events_pruned_through
  SET s.events_pruned_through = forget_through
  WITH s, forget_through
  MATCH (old:Event {session_id: s.id})
  WHERE old.seq <= forget_through
  DELETE old
}
RETURN s.events_pruned_through AS pruned_through
