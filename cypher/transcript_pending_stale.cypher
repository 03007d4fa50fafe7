// name: transcript_pending_stale
// returns: one row {session_id} per claim of $tenant no part touched in the last $idle_seconds
// purpose: the imports in parts a kill or an outage left unfinished in the tenant, whose nodes are to be cleared (service/store/transcript_parts.py: clear_abandoned); aged by Neo4j's clock, the one that touched them
// params: tenant, idle_seconds
MATCH (claim:PendingImport {tenant: $tenant})
WHERE duration.inSeconds(claim.touched_at, datetime()).seconds >= $idle_seconds
RETURN claim.session_id AS session_id
ORDER BY claim.touched_at
