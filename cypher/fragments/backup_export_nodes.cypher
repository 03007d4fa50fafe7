// fragment backup_export_nodes: the session `s`'s first $node_page nodes in (seq, id) order
// after ($node_after_seq, $node_after_id) (the last node of the page before; the least
// integer and '' for the first page), each with its edges, as backup_export returns them (a
// page of them: backup_export_nodes reads the pages after backup_export's). The page is
// read from the (session_id, seq) index in its order: its cost does not grow with the
// session. A node whose seq is not a number is on no page (the export counts them).
  COLLECT {
    MATCH (n:Node {session_id: s.id})
    USING INDEX n:Node(session_id, seq)
    WHERE n.seq >= $node_after_seq AND (n.seq > $node_after_seq OR n.id > $node_after_id)
    // Ordered by the index's keys, so that Neo4j reads it in its order and stops at the page.
    WITH n ORDER BY n.session_id, n.seq, n.id LIMIT $node_page
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
  }
