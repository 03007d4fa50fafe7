// name: session_count
// returns: one row {total}
// purpose: how many of the tenant's sessions the filter keeps (session_filter): a connection's totalCount, counted only when asked
// params: tenant, tool, project, text, since, until
MATCH (s:Session {tenant: $tenant})
// include: session_filter
RETURN count(s) AS total
