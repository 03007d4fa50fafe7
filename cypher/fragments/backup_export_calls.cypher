// fragment backup_export_calls: the session `s`'s calls at positions [$call_skip, $call_skip +
// $call_page) in (start, id) order, each with its reads and what it produced (a page of
// them: backup_export_calls reads the pages after backup_export's).
  COLLECT {
    MATCH (c:Call {session_id: s.id})
    USING INDEX c:Call(session_id)
    RETURN {
      properties: properties(c),
      reads: COLLECT {
        MATCH (c)-[e:READ]->(x:Node)
        RETURN {node_id: x.id, position: e.position} AS read ORDER BY e.position, x.id
      },
      produced_ids: [(c)-[:PRODUCED]->(o:Node) | o.id]
    } AS call
    ORDER BY c.started_at, c.id
    SKIP $call_skip LIMIT $call_page
  }
