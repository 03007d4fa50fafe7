// name: transcript_pending_stale
// returns: one row {session_id} per claim of $tenant no part touched in the last $idle (a duration)
// purpose: the imports in parts a kill or an outage left unfinished in the tenant, whose nodes are to be cleared (service/store/transcript_parts.py: clear_abandoned); aged by Neo4j's clock, the one that touched them
// params: tenant, idle
MATCH (claim:PendingImport {tenant: $tenant})
WHERE claim.touched_at < datetime() - $idle
RETURN claim.session_id AS session_id
ORDER BY claim.touched_at
