// fragment backup_export_calls: the session `s`'s first $call_page calls in (start, id) order
// after ($call_after_started_at, $call_after_id) (the last call of the page before; the
// year 1 and '' for the first page), each with its reads and what it produced (a page of
// them: backup_export_calls reads the pages after backup_export's), read from the
// (session_id, started_at) index in its order. A call whose start is not a datetime is on
// no page (the export counts them).
  COLLECT {
    MATCH (c:Call {session_id: s.id})
    USING INDEX c:Call(session_id, started_at)
    WHERE c.started_at >= $call_after_started_at
      AND (c.started_at > $call_after_started_at OR c.id > $call_after_id)
    WITH c ORDER BY c.session_id, c.started_at, c.id LIMIT $call_page
    RETURN {
      properties: properties(c),
      reads: COLLECT {
        MATCH (c)-[e:READ]->(x:Node)
        RETURN {node_id: x.id, position: e.position} AS read ORDER BY e.position, x.id
      },
      produced_ids: [(c)-[:PRODUCED]->(o:Node) | o.id]
    } AS call
  }
