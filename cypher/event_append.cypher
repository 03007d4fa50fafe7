// name: event_append
// returns: one row {problem, events} (the event written, with its seq); no row when the session does not exist
// purpose: an event that announces no other write of its own (compaction_started, compaction_failed), numbered in the session's sequence
// params: session_id, tenant, event, now
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_write_lock
// Every other event is stored by the write whose change it announces.
WITH s, [$event] AS announced,
  CASE WHEN NOT $event.type IN ['compaction_started', 'compaction_failed']
    THEN 'event_not_standalone' END AS problem
// include: events_write
RETURN problem, events
