// fragment nodes_import: creates the nodes of $nodes (backup rows: properties,
// predecessor_id, caller_id, covers, carries_over, and what their blocks imply: tool_uses,
// answers, answer_errors, media_refs; their timestamps apart, as ISO-8601 text under
// `datetimes`) in session `s` of $tenant, with all their edges, and stores $media (each
// once per tenant and hash). Every node a row names is one of $nodes or a node already
// stored in the session. A row whose id a node holds already overwrites that node's
// properties: the including statement refuses such ids but those it freed of their edges
// to be written again (transcript_extend's $rewritten).
// Expects s in scope.
CALL (s) {
  UNWIND $nodes AS row
  MERGE (n:Node {id: row.properties.id})
  SET n = row.properties, n.tenant = $tenant
  FOREACH (key IN keys(row.datetimes) | SET n[key] = datetime(row.datetimes[key]))
}
CALL (s) {
  UNWIND $nodes AS row
  MATCH (n:Node {id: row.properties.id})
  OPTIONAL MATCH (p:Node {id: row.predecessor_id})
  OPTIONAL MATCH (c:Node {id: row.caller_id})
  FOREACH (x IN CASE WHEN p IS NULL THEN [] ELSE [p] END | CREATE (n)-[:PREDECESSOR]->(x))
  FOREACH (x IN CASE WHEN c IS NULL THEN [] ELSE [c] END | CREATE (n)-[:CALLER]->(x))
  WITH n, row
  UNWIND row.covers AS cover
  MATCH (x:Node {id: cover.node_id})
  CREATE (n)-[:COVERS {order: cover.order}]->(x)
}
// A carry node's CARRIES_OVER edges (rows of a version 4 backup; none before).
CALL (s) {
  UNWIND $nodes AS row
  WITH row WHERE size(coalesce(row.carries_over, [])) > 0
  MATCH (n:Node {id: row.properties.id})
  UNWIND row.carries_over AS carried
  MATCH (x:Node {id: carried.node_id})
  CREATE (n)-[:CARRIES_OVER {order: carried.order}]->(x)
}
// A summary's ENDS_AT, ABSORBED and REPLACED edges stand for its covers_last_id, absorbed_id
// and replaced_id.
CALL (s) {
  UNWIND $nodes AS row
  WITH row WHERE row.properties.role = 'summary'
  MATCH (n:Node {id: row.properties.id}), (last:Node {id: row.properties.covers_last_id})
  CREATE (n)-[:ENDS_AT]->(last)
}
CALL (s) {
  UNWIND $nodes AS row
  WITH row WHERE row.properties.absorbed_id IS NOT NULL
  MATCH (n:Node {id: row.properties.id}), (a:Node {id: row.properties.absorbed_id})
  CREATE (n)-[:ABSORBED]->(a)
}
CALL (s) {
  UNWIND $nodes AS row
  WITH row WHERE row.properties.replaced_id IS NOT NULL
  MATCH (n:Node {id: row.properties.id}), (r:Node {id: row.properties.replaced_id})
  CREATE (n)-[:REPLACED]->(r)
}
// What the nodes' blocks imply, as blocks_write writes it for one node.
CALL (s) {
  UNWIND $nodes AS row
  WITH row WHERE size(row.tool_uses) > 0
  MATCH (n:Node {id: row.properties.id})
  UNWIND range(0, size(row.tool_uses) - 1) AS i
  CREATE (n)-[:USES {order: i}]->(:ToolUse {
    tenant: $tenant, session_id: s.id, id: row.tool_uses[i].id, name: row.tool_uses[i].name})
}
CALL (s) {
  UNWIND $nodes AS row
  WITH row WHERE size(row.answers) > 0
  MATCH (n:Node {id: row.properties.id})-[:PREDECESSOR]->(pred:Node)
  UNWIND range(0, size(row.answers) - 1) AS i
  MATCH (pred)-[:USES]->(answered:ToolUse {id: row.answers[i]})
  CREATE (n)-[:ANSWERS {is_error: row.answer_errors[i]}]->(answered)
}
CALL (s) {
  UNWIND $media AS m
  MERGE (stored:Media {tenant: $tenant, sha256: m.sha256})
  ON CREATE SET stored.media_type = m.media_type, stored.data = m.data, stored.bytes = m.bytes
}
CALL (s) {
  UNWIND $nodes AS row
  WITH row WHERE size(row.media_refs) > 0
  MATCH (n:Node {id: row.properties.id})
  UNWIND row.media_refs AS digest
  MATCH (medium:Media {tenant: $tenant, sha256: digest})
  CREATE (n)-[:CARRIES]->(medium)
}
