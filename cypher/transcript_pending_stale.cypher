// name: transcript_pending_stale
// returns: one row {session_id} per claim of $tenant no part touched since $before
// purpose: the imports in parts a kill or an outage left unfinished in the tenant, whose nodes are to be cleared (service/store/transcript_parts.py: clear_abandoned)
// params: tenant, before
MATCH (claim:PendingImport {tenant: $tenant})
WHERE claim.touched_at < $before
RETURN claim.session_id AS session_id
ORDER BY claim.touched_at
