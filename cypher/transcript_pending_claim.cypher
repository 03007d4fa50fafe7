// name: transcript_pending_claim
// returns: nothing
// purpose: claims session $session_id's first import in parts for $token (service/store/transcript_parts.py): the claim another import held, live or left by a kill, is now $token's, so that import writes no more parts and what it wrote is cleared (transcript_pending_clear) before this one writes its own
// params: tenant, session_id, token
MERGE (claim:PendingImport {session_id: $session_id})
ON CREATE SET claim.tenant = $tenant, claim.started_at = datetime()
SET claim.token = $token, claim.touched_at = datetime()
