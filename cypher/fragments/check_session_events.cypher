// fragment check_session_events: one row {violation} when the events of session `s` are not
// numbered as written, none otherwise. A UNION body, like check_session_invariants: include
// it inside `CALL (s) { ... }`, after that one and a UNION ALL. It reads :Event nodes, so a
// statement that stores events leaves it out (events_write says why).
// The kept events are exactly those after the last one retention forgot, up to the last
// one written, each number once.
WITH s, s.next_event_seq - s.events_pruned_through AS expected,
  COUNT { (e:Event {session_id: s.id}) } AS kept,
  COUNT { MATCH (e:Event {session_id: s.id})
          WHERE s.events_pruned_through < e.seq <= s.next_event_seq
          RETURN DISTINCT e.seq } AS numbered
WHERE kept <> expected OR numbered <> expected
RETURN 'events: ' + toString(kept) + ' kept, ' + toString(numbered) + ' of them numbered '
  + toString(s.events_pruned_through + 1) + ' to ' + toString(s.next_event_seq)
  + ' once each; expected ' + toString(expected) AS violation
