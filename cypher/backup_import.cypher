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
  CREATE (s:Session)
  SET s = $session.properties, s.tenant = $tenant,
    s.meta_version = coalesce($session.properties.meta_version, 0),
    s.summary_version = coalesce($session.properties.summary_version, 0),
    // A backup written before sessions were listed by activity: its times and its calls'.
    s.first_activity_at = coalesce($session.properties.first_activity_at,
                                   $session.properties.created_at),
    s.last_activity_at = coalesce($session.properties.last_activity_at,
                                  $session.properties.updated_at),
    s.models = coalesce($session.properties.models, reduce(models = [], row IN $calls |
      CASE WHEN row.properties.model IS NULL OR row.properties.model IN models THEN models
           ELSE models + row.properties.model END)),
    // Events are not exported: the imported session's sequence starts afresh.
    s.next_event_seq = 0, s.events_pruned_through = 0
  WITH s
  // include: nodes_import
  CALL (s) {
    UNWIND $calls AS row
    CREATE (c:Call)
    SET c = row.properties, c.tenant = $tenant
    WITH c, row
    OPTIONAL MATCH (o:Node {id: row.produced_id})
    FOREACH (x IN CASE WHEN o IS NULL THEN [] ELSE [o] END | CREATE (c)-[:PRODUCED]->(x))
    WITH c, row
    UNWIND row.reads AS read
    MATCH (x:Node {id: read.node_id})
    CREATE (c)-[:READ {position: read.position}]->(x)
  }
  CALL (s) {
    UNWIND $tool_sets AS t
    MERGE (stored:ToolSet {tenant: $tenant, sha256: t.sha256})
    ON CREATE SET stored.tools = t.tools
  }
  CALL (s) {
    UNWIND $tool_set_versions AS row
    CREATE (s)-[:TOOL_SET_VERSION]->(v:ToolSetVersion)
    SET v = row.properties, v.tenant = s.tenant, v.session_id = s.id
    WITH v, row WHERE row.properties.tools_sha256 IS NOT NULL
    MATCH (tools:ToolSet {tenant: $tenant, sha256: row.properties.tools_sha256})
    CREATE (v)-[:OFFERS]->(tools)
  }
  CALL (s) {
    MATCH (c:Call {session_id: s.id}) WHERE c.tools_sha256 IS NOT NULL
    MATCH (tools:ToolSet {tenant: $tenant, sha256: c.tools_sha256})
    CREATE (c)-[:OFFERED]->(tools)
  }
  CALL (s) {
    UNWIND $labels AS row
    MATCH (n:Node {id: row.node_id})
    CREATE (s)-[l:LABELED]->(n)
    SET l = row.properties, l.tenant = s.tenant, l.session_id = s.id
  }
  CALL (s) {
    UNWIND $branch_names AS row
    MATCH (n:Node {id: row.node_id})
    CREATE (s)-[named:NAMES]->(n)
    SET named = row.properties
  }
  CALL (s) {
    UNWIND $pins AS row
    MATCH (n:Node {id: row.node_id})
    CREATE (s)-[p:PINNED]->(n)
    SET p = row.properties
  }
  CALL (s) {
    MATCH (r:Node {id: $session.root_id})
    CREATE (s)-[:ROOT]->(r)
  }
  CALL (s) {
    MATCH (h:Node {id: $session.head_id})
    CREATE (s)-[:HEAD]->(h)
  }
  CALL (s) {
    MATCH (a:Node {id: $session.active_summary_id})
    CREATE (s)-[:ACTIVE_SUMMARY]->(a)
  }
  // What was written, counted from the session's own nodes and calls (found through their
  // session index: a count written as a pattern was planned, on a store holding few edges of
  // some type, as a scan of every edge of that type in the store).
  CALL (s) {
    MATCH (n:Node {session_id: s.id})
    USING INDEX n:Node(session_id)
    RETURN count(n) AS nodes,
      sum(COUNT { (n)-[:PREDECESSOR]->() }) AS predecessor,
      sum(COUNT { (n)-[:CALLER]->() }) AS caller,
      sum(COUNT { (n)-[:COVERS]->() }) AS covers,
      sum(COUNT { (n)-[:CARRIES_OVER]->() }) AS carries_over,
      sum(COUNT { (n)-[:ABSORBED]->() }) AS absorbed,
      sum(COUNT { (n)-[:REPLACED]->() }) AS replaced,
      sum(COUNT { (n)-[:USES]->() }) AS uses,
      sum(COUNT { (n)-[:CARRIES]->() }) AS carries
  }
  CALL (s) {
    MATCH (c:Call {session_id: s.id})
    USING INDEX c:Call(session_id)
    RETURN count(c) AS calls, sum(COUNT { (c)-[:READ]->() }) AS read,
      sum(COUNT { (c)-[:PRODUCED]->() }) AS produced,
      sum(COUNT { (c)-[:OFFERED]->() }) AS offered
  }
  CALL (s) {
    MATCH (u:ToolUse {session_id: s.id})
    USING INDEX u:ToolUse(session_id)
    RETURN count(u) AS tool_uses
  }
  WITH s, {
    nodes: nodes, calls: calls, predecessor: predecessor, caller: caller, covers: covers,
    carries_over: carries_over, absorbed: absorbed, replaced: replaced, read: read,
    produced: produced,
    root: COUNT { (s)-[:ROOT]->() },
    head: COUNT { (s)-[:HEAD]->() },
    active_summary: COUNT { (s)-[:ACTIVE_SUMMARY]->() },
    tool_uses: tool_uses, uses: uses, carries: carries, offered: offered,
    tool_set_versions: COUNT { (s)-[:TOOL_SET_VERSION]->() },
    offers: COUNT { (s)-[:TOOL_SET_VERSION]->()-[:OFFERS]->() },
    labeled: COUNT { (s)-[:LABELED]->() },
    named: COUNT { (s)-[:NAMES]->() },
    pinned: COUNT { (s)-[:PINNED]->() }
  } AS created
  OPTIONAL CALL (s) {
    // include: check_session_invariants
    UNION ALL
    // include: check_session_events
  }
  RETURN created, collect(violation) AS violations
}
RETURN problem, any(own IN taken_sessions WHERE NOT own) AS session_elsewhere,
  [t IN taken WHERE t.own | t.id] AS taken_ids, size([t IN taken WHERE NOT t.own]) AS taken_elsewhere,
  missing_media, created, violations
