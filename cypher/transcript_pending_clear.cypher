// name: transcript_pending_clear
// returns: one row {cleared}: how many nodes and tool uses it deleted (0: none is left); none when the claim is not $token's
// purpose: deletes up to $limit of the nodes (then tool uses) an unfinished import in parts of session $session_id wrote, and the media only they carried, while its claim is $token's and the session does not exist, in a transaction of its own: run until it clears none (service/store/transcript_parts.py)
// params: session_id, token, limit
OPTIONAL MATCH (claim:PendingImport {session_id: $session_id})
CALL (claim) {
  WITH claim WHERE claim IS NOT NULL
  SET claim.touched_at = datetime()
}
WITH claim
WHERE claim.token = $token AND NOT EXISTS { MATCH (:Session {id: $session_id}) }
CALL (claim) {
  MATCH (n:Node {session_id: claim.session_id})
  USING INDEX n:Node(session_id)
  WITH n LIMIT $limit
  OPTIONAL MATCH (n)-[:CARRIES]->(medium:Media)
  WITH collect(DISTINCT n) AS nodes, collect(DISTINCT medium) AS media
  FOREACH (n IN nodes | DETACH DELETE n)
  WITH nodes, media
  // A medium no other node carries was stored by this import: it goes with its nodes.
  CALL (media) {
    UNWIND media AS medium
    WITH medium WHERE NOT EXISTS { (medium)<-[:CARRIES]-() }
    DELETE medium
  }
  RETURN size(nodes) AS nodes
}
CALL (claim, nodes) {
  MATCH (u:ToolUse {session_id: claim.session_id})
  USING INDEX u:ToolUse(session_id)
  WHERE nodes = 0
  WITH u LIMIT $limit
  DETACH DELETE u
  RETURN count(u) AS tool_uses
}
RETURN nodes + tool_uses AS cleared
