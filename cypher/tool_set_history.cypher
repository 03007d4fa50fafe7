// name: tool_set_history
// returns: one row {session_id, versions} per session stored for the tenant: its tool set versions, oldest first
// purpose: a session's tool set history (setTools), each version with its definitions
// params: session_ids, tenant
UNWIND $session_ids AS session_id
MATCH (s:Session {id: session_id, tenant: $tenant})
RETURN s.id AS session_id, COLLECT {
  MATCH (s)-[:TOOL_SET_VERSION]->(v:ToolSetVersion)
  OPTIONAL MATCH (v)-[:OFFERS]->(t:ToolSet)
  RETURN v {.*, tools: t.tools} AS version
  ORDER BY v.version
} AS versions
