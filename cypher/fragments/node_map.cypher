// fragment node_map: the map every statement returns for node `n` — its properties, the id of
// its predecessor and the id of the turn that spawned it (null when it has none); null when
// `n` is null. An expression: include it where the map goes, then name it (`AS node`).
n {
  .*,
  predecessor_id: [(n)-[:PREDECESSOR]->(node_map_predecessor:Node) | node_map_predecessor.id][0],
  caller_id: [(n)-[:CALLER]->(node_map_caller:Node) | node_map_caller.id][0]
}
