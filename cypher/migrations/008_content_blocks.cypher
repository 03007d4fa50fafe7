// Content blocks (docs/concepts/content-blocks.md): a tool use is a :ToolUse node
// of its message, unique in its session; media is stored once per tenant and content hash.
CREATE CONSTRAINT tool_use_session_id IF NOT EXISTS
FOR (u:ToolUse) REQUIRE (u.session_id, u.id) IS UNIQUE;
CREATE CONSTRAINT media_tenant_sha256 IF NOT EXISTS
FOR (m:Media) REQUIRE (m.tenant, m.sha256) IS UNIQUE;
// The tools a call was offered, stored once per tenant and content hash (OFFERED).
CREATE CONSTRAINT tool_set_tenant_sha256 IF NOT EXISTS
FOR (t:ToolSet) REQUIRE (t.tenant, t.sha256) IS UNIQUE
