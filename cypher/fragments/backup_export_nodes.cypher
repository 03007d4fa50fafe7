// fragment backup_export_nodes: the session `s`'s nodes at positions [$node_skip, $node_skip +
// $node_page) in (seq, id) order, each with its edges, as backup_export returns them (a
// page of them: backup_export_nodes reads the pages after backup_export's).
  COLLECT {
    MATCH (n:Node {session_id: s.id})
    USING INDEX n:Node(session_id)
    RETURN {
      properties: properties(n),
      predecessor_ids: [(n)-[:PREDECESSOR]->(p:Node) | p.id],
      caller_ids: [(n)-[:CALLER]->(c:Node) | c.id],
      covers: COLLECT {
        MATCH (n)-[e:COVERS]->(x:Node)
        RETURN {node_id: x.id, order: e.order} AS cover ORDER BY e.order, x.id
      },
      carries_over: COLLECT {
        MATCH (n)-[e:CARRIES_OVER]->(x:Node)
        RETURN {node_id: x.id, order: e.order} AS carried ORDER BY e.order, x.id
      }
    } AS node
    ORDER BY n.seq, n.id
    SKIP $node_skip LIMIT $node_page
  }
