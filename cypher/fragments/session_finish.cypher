// fragment session_finish: writes what an imported session holds beside its nodes (they
// are written: nodes_import, in this transaction) — $calls with their edges, the tool sets
// and tool set versions, $labels, $branch_names, $pins, ROOT, HEAD and the active summary —
// then counts what the session holds (`created`) and checks its invariants (`violation`
// rows). Expects s in scope; returns created, violations.
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
