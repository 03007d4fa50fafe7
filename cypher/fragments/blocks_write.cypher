// fragment blocks_write: what a new node `n` (just created after `pred`) carries beyond its
// properties: a ToolUse node for each tool use it opens ($tool_uses, in order, USES {order}),
// an ANSWERS {is_error} edge to each tool use of `pred` its results answer ($answers,
// $answer_errors alike ordered), and a CARRIES edge to each medium its blocks name
// ($media_refs), stored once per (tenant, sha256) from $media when new.
// Expects s, n and pred in scope; adds no variables.
FOREACH (i IN range(0, size($tool_uses) - 1) |
  CREATE (n)-[:USES {order: i}]->(:ToolUse {
    tenant: s.tenant, session_id: s.id, id: $tool_uses[i].id, name: $tool_uses[i].name}))
FOREACH (m IN $media |
  MERGE (stored:Media {tenant: s.tenant, sha256: m.sha256})
  ON CREATE SET stored.media_type = m.media_type, stored.data = m.data, stored.bytes = m.bytes)
WITH *
CALL (s, n, pred) {
  UNWIND range(0, size($answers) - 1) AS i
  MATCH (pred)-[:USES]->(answered:ToolUse {id: $answers[i]})
  CREATE (n)-[:ANSWERS {is_error: $answer_errors[i]}]->(answered)
}
CALL (s, n) {
  UNWIND $media_refs AS digest
  MATCH (medium:Media {tenant: s.tenant, sha256: digest})
  CREATE (n)-[:CARRIES]->(medium)
}
