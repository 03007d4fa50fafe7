// name: session_event_bounds
// returns: one row {last_seq, pruned_through} when the session exists for the tenant
// purpose: where a session's event sequence stands: its last event, and the last one its retention forgot
// params: session_id, tenant
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN s.next_event_seq AS last_seq, s.events_pruned_through AS pruned_through
