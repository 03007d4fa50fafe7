// fragment node_map: the map every statement returns for node `n` — its properties (created_at
// as [epoch seconds, nanosecond, offset seconds]), the id of its predecessor and the id of
// the turn that spawned it (null when it has none), and its element id (a call recorded from
// a render names its reads by it too: call_reads_check); null when `n` is null. An
// expression: include it where the map goes, then name it (`AS node`).
n {
  .*,
  // As numbers: the driver's DateTime decoding was most of a long render's client time.
  created_at: [n.created_at.epochSeconds, n.created_at.nanosecond, n.created_at.offsetSeconds],
  predecessor_id: [(n)-[:PREDECESSOR]->(node_map_predecessor:Node) | node_map_predecessor.id][0],
  caller_id: [(n)-[:CALLER]->(node_map_caller:Node) | node_map_caller.id][0],
  element_id: elementId(n)
}
