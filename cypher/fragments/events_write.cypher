// fragment events_write: unless `problem` is set, writes the events `announced` (a list of
// maps, each with its `type`) as :Event nodes of session `s`, numbered on from
// s.next_event_seq in order and stamped $now, then forgets the session's events that fall
// out of its retention (the newest $event_retention are kept) and moves
// s.events_pruned_through to the last number forgotten. Included after session_write_lock
// (or session_lock): one session's writes are serialized there, so its events are numbered
// in commit order, without gaps, and an event exists if and only if its change committed.
// Expects s, problem and announced in scope; binds `events`, the events written as
// maps with their session_id, seq and at ([] when none).
OPTIONAL CALL (s, problem, announced) {
  WITH * WHERE problem IS NULL AND size(announced) > 0
  WITH s, announced, s.next_event_seq AS before
  SET s.next_event_seq = before + size(announced)
  WITH s, announced, before
  UNWIND range(0, size(announced) - 1) AS i
  WITH s, before, i, announced[i] AS announcement
  WITH s, announcement {.*, session_id: s.id, seq: before + i + 1, at: $now} AS event
  CREATE (e:Event)
  SET e = event, e.tenant = s.tenant
  WITH s, event ORDER BY event.seq
  WITH s, collect(event) AS numbered
  WITH s, numbered, s.next_event_seq - $event_retention AS forget_through
  CALL (s, forget_through) {
    WITH * WHERE forget_through > s.events_pruned_through
    SET s.events_pruned_through = forget_through
    WITH s, forget_through
    MATCH (old:Event {session_id: s.id})
    WHERE old.seq <= forget_through
    DELETE old
  }
  RETURN numbered AS written_events
}
WITH *, coalesce(written_events, []) AS events
