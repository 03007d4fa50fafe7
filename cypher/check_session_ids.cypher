// name: check_session_ids
// returns: one row {session_id, tenant} per session of $tenant (of every tenant when null), in tenant and id order
// purpose: the sessions a whole-store invariant check visits
// params: tenant
MATCH (s:Session)
WHERE $tenant IS NULL OR s.tenant = $tenant
RETURN s.id AS session_id, s.tenant AS tenant
ORDER BY tenant, session_id
