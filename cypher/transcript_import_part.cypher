// name: transcript_import_part
// returns: one row {problem, session_elsewhere, taken_ids, taken_elsewhere, missing_media}; nothing is created when problem is set
// purpose: a part of a large transcript's first import (service/store/transcript_parts.py), in a transaction of its own: creates the nodes of $nodes — a run of the session's node rows in seq order — with all their edges and the media they carry, after checking that the import's claim is still $token's, that no session holds the session's id (in any tenant: session_elsewhere), that none of their ids (or their tool uses' ids in the session) exists and that the media they name are in $media or stored; transcript_import_session then creates the session and checks what all the parts wrote
// params: tenant, session_id, token, nodes, referred, media, media_stored
CYPHER replan=skip
// Planning this statement takes seconds on a cold JVM, and Neo4j plans it again whenever
// the store's statistics have moved enough: its plan is index seeks by id, kept.
// The claim is locked (touched) before its token is read: an import that took it over
// either clears this part once written, or this part sees the token it set.
OPTIONAL MATCH (claim:PendingImport {session_id: $session_id})
CALL (claim) {
  WITH claim WHERE claim IS NOT NULL
  SET claim.touched_at = datetime()
}
WITH coalesce(claim.token = $token, false) AS claimed
// $referred: the ids of the nodes of earlier parts the rows name (backup.placed), written
// by this import already. Ids taken in other tenants are only counted.
WITH claimed,
  COLLECT { MATCH (x:Session {id: $session_id}) RETURN coalesce(x.tenant = $tenant, false) AS own } AS taken_sessions,
  COLLECT {
    UNWIND $nodes AS row MATCH (x:Node {id: row.properties.id}) RETURN {id: x.id, own: coalesce(x.tenant = $tenant, false)} AS taken
    UNION ALL
    UNWIND $nodes AS row UNWIND row.tool_uses AS tool_use
    MATCH (x:ToolUse {session_id: $session_id, id: tool_use.id})
    USING INDEX x:ToolUse(session_id, id)
    RETURN {id: x.id, own: coalesce(x.tenant = $tenant, false)} AS taken
  } AS taken,
  [digest IN $media_stored WHERE NOT EXISTS { (:Media {tenant: $tenant, sha256: digest}) }] AS missing_media
WITH taken, missing_media, taken_sessions,
  CASE
    WHEN NOT claimed THEN 'import_taken_over'
    WHEN size(taken_sessions) > 0 THEN 'session_exists'
    WHEN size(taken) > 0 THEN 'ids_exist'
    WHEN size(missing_media) > 0 THEN 'media_not_carried'
  END AS problem
OPTIONAL CALL (problem) {
  WITH * WHERE problem IS NULL
  // The session node comes last (transcript_import_session); its nodes need its id only.
  WITH {id: $session_id} AS s
  // include: nodes_import
  RETURN true AS written
}
RETURN problem, any(own IN taken_sessions WHERE NOT own) AS session_elsewhere,
  [t IN taken WHERE t.own | t.id] AS taken_ids,
  size([t IN taken WHERE NOT t.own]) AS taken_elsewhere, missing_media
