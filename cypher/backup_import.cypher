// name: backup_import
// returns: one row {problem, session_elsewhere, taken_ids, taken_elsewhere, missing_media, created, violations}; nothing is created when problem is set
// purpose: rebuilds an exported session in the importing tenant — Session, Nodes, Calls and all their edges (a summary's ABSORBED and REPLACED from its properties, a node's ToolUse nodes, ANSWERS and CARRIES from its blocks), the media it carries, the tools its calls were offered, its tool set versions, its labels, its branch names and its pins — after checking that none of its ids exists and that the media it names are in the document or stored, then checks the invariants of what it wrote
// params: tenant, session, nodes, referred, calls, media, media_stored, tool_sets, tool_set_versions, labels, branch_names, pins
CYPHER replan=skip
// Planning this statement takes seconds (tens on a cold JVM), and Neo4j plans it again
// whenever the store's statistics have moved enough: during a folder import, every few
// files. Its plan is index seeks by id that suit a store of any size: it is kept.
// Every id a row names was checked by the caller to be one of the document's own nodes.
// A node row carries what its blocks imply, as the API's writes take it (blocks_write):
// tool_uses [{id, name}], answers with answer_errors alike ordered, media_refs. $media are
// the document's media; $media_stored the hashes its nodes name that it does not carry,
// each to be stored for the tenant already. The caller rolls the transaction back when
// `created` falls short of the document or `violations` is not empty (an answer reaching
// no tool use of its predecessor is one), so only a sound session is ever imported. Ids
// taken in other tenants are only counted: an import never learns another tenant's ids.
WITH
  COLLECT { MATCH (x:Session {id: $session.properties.id}) RETURN coalesce(x.tenant = $tenant, false) AS own } AS taken_sessions,
  COLLECT {
    UNWIND $nodes AS row MATCH (x:Node {id: row.properties.id}) RETURN {id: x.id, own: coalesce(x.tenant = $tenant, false)} AS taken
    UNION ALL
    UNWIND $calls AS row MATCH (x:Call {id: row.properties.id}) RETURN {id: x.id, own: coalesce(x.tenant = $tenant, false)} AS taken
    UNION ALL
    // Tool use ids are unique per session id: left over only where the session is gone.
    UNWIND $nodes AS row UNWIND row.tool_uses AS tool_use
    MATCH (x:ToolUse {session_id: $session.properties.id, id: tool_use.id})
    USING INDEX x:ToolUse(session_id, id)
    RETURN {id: x.id, own: coalesce(x.tenant = $tenant, false)} AS taken
  } AS taken,
  [digest IN $media_stored WHERE NOT EXISTS { (:Media {tenant: $tenant, sha256: digest}) }] AS missing_media
WITH taken_sessions, taken, missing_media,
  CASE
    WHEN size(taken_sessions) > 0 THEN 'session_exists'
    WHEN size(taken) > 0 THEN 'ids_exist'
    WHEN size(missing_media) > 0 THEN 'media_not_carried'
  END AS problem
OPTIONAL CALL (problem) {
  WITH * WHERE problem IS NULL
  // include: session_create
  WITH s
  // include: nodes_import
  // include: session_finish
}
RETURN problem, any(own IN taken_sessions WHERE NOT own) AS session_elsewhere,
  [t IN taken WHERE t.own | t.id] AS taken_ids, size([t IN taken WHERE NOT t.own]) AS taken_elsewhere,
  missing_media, created, violations
