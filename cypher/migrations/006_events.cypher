// Session events are data (issue: durable, replayable events): each write stores the events
// it announces as :Event nodes numbered per session, read back in order by any replica.
CREATE INDEX event_session_seq IF NOT EXISTS FOR (e:Event) ON (e.session_id, e.seq);
// Read under the session's lock by every write that announces an event: they exist from
// the session's creation on (see 005).
MATCH (s:Session) WHERE s.next_event_seq IS NULL
SET s.next_event_seq = 0, s.events_pruned_through = 0
