// fragment events_write: unless `problem` is set, writes the events `announced` (a list of
// maps, each with its `type`) as :Event nodes of session `s`, numbered on from
// s.next_event_seq in order and stamped $now. Included after session_write_lock (or
// session_lock): one session's writes are serialized there, so its events are numbered in
// commit order, without gaps, and an event exists if and only if its change committed.
// It only creates events and reads none: a write whose plan read :Event nodes would be
// planned again whenever their statistics moved, which every write makes them do. The
// events past retention are forgotten in batches by events_prune (service/store/events.py).
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
  WITH event ORDER BY event.seq
  RETURN collect(event) AS written_events
}
WITH *, coalesce(written_events, []) AS events
