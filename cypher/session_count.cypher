// name: session_count
// returns: one row {total}
// purpose: how many sessions the tenant has (a connection's totalCount, counted only when asked)
// params: tenant
MATCH (s:Session {tenant: $tenant})
RETURN count(s) AS total
