// name: tool_set_get_many
// returns: one row {sha256, tools} per hash stored for the tenant
// purpose: the tool definitions calls were offered (OFFERED), by content hash, for replay and diff
// params: hashes, tenant
UNWIND $hashes AS digest
MATCH (t:ToolSet {tenant: $tenant, sha256: digest})
RETURN t.sha256 AS sha256, t.tools AS tools
