// name: transcript_tool_set
// returns: zero or one row {version}: the version written, null when the session's newest version is session-wide and offers these tools already; no row when the session does not exist for the tenant
// purpose: a grown transcript file names other tools than it did: a new session-wide version of the session's tool set offering them (numbered after the last, created at the time of the line naming them, no tool_choice), their definitions stored once per tenant and content hash (OFFERS)
// params: session_id, tenant, tools, tools_sha256, created_at, now
// Numbered under the session's write lock, as setTools numbers its versions
// (tool_set_put); an import stopped after this statement and before its extension is
// written finds the version here when it runs again and writes no second one.
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_write_lock
WITH s, COLLECT {
  MATCH (s)-[:TOOL_SET_VERSION]->(v:ToolSetVersion)
  RETURN v ORDER BY v.version DESC LIMIT 1
}[0] AS newest
OPTIONAL CALL (s, newest) {
  WITH * WHERE newest IS NULL OR newest.anchor_id IS NOT NULL
    OR newest.tools_sha256 IS NULL OR newest.tools_sha256 <> $tools_sha256
  CREATE (s)-[:TOOL_SET_VERSION]->(v:ToolSetVersion {
    tenant: s.tenant, session_id: s.id, version: coalesce(newest.version, 0) + 1,
    tools_sha256: $tools_sha256, created_at: $created_at})
  MERGE (t:ToolSet {tenant: s.tenant, sha256: $tools_sha256})
  ON CREATE SET t.tools = $tools
  CREATE (v)-[:OFFERS]->(t)
  RETURN v {.*, tools: $tools} AS version
}
RETURN version
