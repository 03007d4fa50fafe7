// name: tool_set_put
// returns: zero or one row {problem, version}; no row when the session does not exist for the tenant
// purpose: a new version of a session's tool set (setTools): its definitions stored once per tenant and content hash (OFFERS), the version numbered after the session's last; anchored at a node for a branch's set, or not for the session's
// params: session_id, tenant, tools, tools_sha256, tool_choice, anchor_id, now
// Versions are numbered under the session's write lock, so two setTools never share one.
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_write_lock
WITH s
OPTIONAL MATCH (a:Node {id: $anchor_id, tenant: $tenant})
WITH s, CASE
  WHEN $anchor_id IS NULL THEN null
  WHEN a IS NULL THEN 'node_not_found'
  WHEN a.session_id <> s.id THEN 'node_other_session'
  WHEN a.deleted_at IS NOT NULL THEN 'node_deleted'
  WHEN a.role = 'summary' THEN 'node_summary' END AS problem
OPTIONAL CALL (s, problem) {
  WITH * WHERE problem IS NULL
  WITH s, COUNT { (s)-[:TOOL_SET_VERSION]->(:ToolSetVersion) } + 1 AS number
  CREATE (s)-[:TOOL_SET_VERSION]->(v:ToolSetVersion {
    tenant: s.tenant, session_id: s.id, version: number, anchor_id: $anchor_id,
    tools_sha256: $tools_sha256, tool_choice: $tool_choice, created_at: $now})
  FOREACH (digest IN CASE WHEN $tools_sha256 IS NULL THEN [] ELSE [$tools_sha256] END |
    MERGE (t:ToolSet {tenant: s.tenant, sha256: digest})
    ON CREATE SET t.tools = $tools
    CREATE (v)-[:OFFERS]->(t))
  RETURN v {.*, tools: $tools} AS version
}
RETURN problem, version
