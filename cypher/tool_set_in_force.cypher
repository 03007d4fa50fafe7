// name: tool_set_in_force
// returns: zero or one row {version}: the session's tool set version in force at the head (null when it has none); no row when the session does not exist for the tenant
// purpose: the tool set a call at the head is offered: the latest version that is the session's (no anchor) or anchored on the head's chain (the head or an ancestor)
// params: session_id, tenant, head_id
// $head_id null: the session's HEAD.
MATCH (s:Session {id: $session_id, tenant: $tenant})
OPTIONAL MATCH (s)-[:HEAD]->(at_head:Node)
OPTIONAL MATCH (given:Node {id: $head_id, tenant: $tenant, session_id: s.id})
WITH s, CASE WHEN $head_id IS NULL THEN at_head ELSE given END AS h
RETURN COLLECT {
  MATCH (s)-[:TOOL_SET_VERSION]->(v:ToolSetVersion)
  WHERE v.anchor_id IS NULL
     OR (h IS NOT NULL AND EXISTS { (h)-[:PREDECESSOR*0..]->(:Node {id: v.anchor_id}) })
  OPTIONAL MATCH (v)-[:OFFERS]->(t:ToolSet)
  RETURN v {.*, tools: t.tools} AS version
  ORDER BY v.version DESC LIMIT 1
}[0] AS version
