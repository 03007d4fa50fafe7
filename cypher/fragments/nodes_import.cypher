// fragment nodes_import: creates the nodes of $nodes (backup rows: properties,
// predecessor_id, caller_id, covers, carries_over, and what their blocks imply: tool_uses,
// answers, answer_errors, media_refs; their timestamps apart, as ISO-8601 text under
// `datetimes`) in session `s` of $tenant, with all their edges, and stores $media (each
// once per tenant and hash). Every node a row names is one of $nodes or a node already
// stored in the session. A row whose id a node holds already overwrites that node's
// properties: the including statement refuses such ids but those it freed of their edges
// to be written again (transcript_extend's $rewritten).
// Each node a row names is placed (backup.placed): `*_at` is its index in $nodes, or past
// them in $referred, the ids of the stored nodes the rows name. So each edge is made from
// the nodes in hand, not by an index seek per edge: a pass per kind of edge, each seeking
// every row's node by id, cost as much as writing the nodes did.
// Expects s in scope.
CALL (s) {
  UNWIND $nodes AS row
  MERGE (n:Node {id: row.properties.id})
  SET n = row.properties, n.tenant = $tenant
  FOREACH (key IN keys(row.datetimes) | SET n[key] = datetime(row.datetimes[key]))
  RETURN collect(n) AS written
}
CALL (s) {
  UNWIND $referred AS id
  OPTIONAL MATCH (x:Node {id: id})
  RETURN [found IN collect([x]) | found[0]] AS referred  // one per id, null if not found
}
// collect keeps the rows' order, so written[i] is $nodes[i]'s node (a node placed wrongly
// would break the depth order the invariant check proves).
WITH s, written, written + referred AS placed
CALL (s, written, placed) {
  UNWIND range(0, size(written) - 1) AS i
  WITH s, placed, written[i] AS n, $nodes[i] AS row
  // A node not found (placed[null] is null too) gets no edge, which the checks count.
  FOREACH (x IN [y IN [placed[row.predecessor_at]] WHERE y IS NOT NULL] |
    CREATE (n)-[:PREDECESSOR]->(x))
  FOREACH (x IN [y IN [placed[row.caller_at]] WHERE y IS NOT NULL] |
    CREATE (n)-[:CALLER]->(x))
  FOREACH (cover IN row.covers |
    FOREACH (x IN [y IN [placed[cover.at]] WHERE y IS NOT NULL] |
      CREATE (n)-[:COVERS {order: cover.order}]->(x)))
  // A carry node's CARRIES_OVER edges (rows of a version 4 backup; none before).
  FOREACH (carried IN coalesce(row.carries_over, []) |
    FOREACH (x IN [y IN [placed[carried.at]] WHERE y IS NOT NULL] |
      CREATE (n)-[:CARRIES_OVER {order: carried.order}]->(x)))
  // A summary's ENDS_AT, ABSORBED and REPLACED edges stand for its covers_last_id,
  // absorbed_id and replaced_id.
  FOREACH (x IN [y IN [placed[row.covers_last_at]] WHERE y IS NOT NULL
                 AND row.properties.role = 'summary'] |
    CREATE (n)-[:ENDS_AT]->(x))
  FOREACH (x IN [y IN [placed[row.absorbed_at]] WHERE y IS NOT NULL] |
    CREATE (n)-[:ABSORBED]->(x))
  FOREACH (x IN [y IN [placed[row.replaced_at]] WHERE y IS NOT NULL] |
    CREATE (n)-[:REPLACED]->(x))
  // What the node's blocks imply, as blocks_write writes it for one node.
  FOREACH (j IN range(0, size(row.tool_uses) - 1) |
    CREATE (n)-[:USES {order: j}]->(:ToolUse {
      tenant: $tenant, session_id: s.id, id: row.tool_uses[j].id, name: row.tool_uses[j].name}))
}
CALL (s, written) {
  UNWIND range(0, size(written) - 1) AS i
  WITH written[i] AS n, $nodes[i] AS row
  WHERE size(row.answers) > 0
  MATCH (n)-[:PREDECESSOR]->(pred:Node)
  UNWIND range(0, size(row.answers) - 1) AS j
  MATCH (pred)-[:USES]->(answered:ToolUse)
  WHERE answered.id = row.answers[j]
  CREATE (n)-[:ANSWERS {is_error: row.answer_errors[j]}]->(answered)
}
CALL (s) {
  UNWIND $media AS m
  MERGE (stored:Media {tenant: $tenant, sha256: m.sha256})
  ON CREATE SET stored.media_type = m.media_type, stored.data = m.data, stored.bytes = m.bytes
}
CALL (s, written) {
  UNWIND range(0, size(written) - 1) AS i
  WITH written[i] AS n, $nodes[i] AS row
  WHERE size(row.media_refs) > 0
  UNWIND row.media_refs AS digest
  MATCH (medium:Media {tenant: $tenant, sha256: digest})
  CREATE (n)-[:CARRIES]->(medium)
}
