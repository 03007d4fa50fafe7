// name: transcript_pending_release
// returns: nothing
// purpose: ends session $session_id's claim of an import in parts while it is $token's, once what the import wrote is cleared (transcript_pending_clear), or once the session exists (nothing of the claim's is left to clear: its ids are the session's)
// params: session_id, token
MATCH (claim:PendingImport {session_id: $session_id})
WHERE claim.token = $token
  AND (EXISTS { MATCH (:Session {id: $session_id}) }
       OR (NOT EXISTS { MATCH (:Node {session_id: $session_id}) }
           AND NOT EXISTS { MATCH (:ToolUse {session_id: $session_id}) }))
DELETE claim
