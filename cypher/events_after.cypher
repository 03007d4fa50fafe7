// name: events_after
// returns: rows {session_id, event} in order of session and seq: up to $limit events of each session after its cursor
// purpose: what the subscribers of one service process have not seen yet (every replica reads the same sequence)
// params: cursors, limit
// Session ids are unique across tenants, and each cursor's session was checked against
// its subscriber's tenant when the subscription started.
UNWIND $cursors AS cursor
CALL (cursor) {
  MATCH (e:Event {session_id: cursor.session_id})
  WHERE e.seq > cursor.after
  RETURN e
  ORDER BY e.seq
  LIMIT $limit
}
RETURN cursor.session_id AS session_id, e {.*} AS event
