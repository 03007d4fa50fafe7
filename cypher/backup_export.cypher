// name: backup_export
// returns: zero or one row {session, root_ids, head_ids, active_summary_ids, nodes, calls, media, node_count, call_count, media_count, tool_sets, tool_set_versions, labels, branch_names, pins}: nodes, calls and media, the first page of each: backup_export_nodes, _calls and _media read the next pages
// purpose: everything a backup needs to rebuild a session — its properties, every node (deleted and superseded ones too) and every call, with all their edges, the media its nodes carry, the tools its calls were offered and its tool set versions (setTools) with the tools they offer
// params: session_id, tenant, node_after_seq, node_after_id, node_page, call_after_started_at, call_after_id, call_page, media_skip, media_page
// Edges to single targets come back as lists, so a session holding two of them is seen,
// not silently reduced to one. Nodes are in seq order, calls in start order. Events are
// news of changes, not part of the conversation, and are not exported. A node's ToolUse
// nodes and ANSWERS edges follow from its properties (an import derives them); the media
// its blocks name by hash are listed once each, in hash order.
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN properties(s) AS session,
  [(s)-[:ROOT]->(r:Node) | r.id] AS root_ids,
  [(s)-[:HEAD]->(h:Node) | h.id] AS head_ids,
  [(s)-[:ACTIVE_SUMMARY]->(a:Node) | a.id] AS active_summary_ids,
  // include: backup_export_nodes
  AS nodes,
  // include: backup_export_calls
  AS calls,
  // include: backup_export_media
  AS media,
  COUNT { MATCH (n:Node {session_id: s.id}) } AS node_count,
  COUNT { MATCH (c:Call {session_id: s.id}) } AS call_count,
  size(COLLECT {
    MATCH (carrier:Node {session_id: s.id})-[:CARRIES]->(m:Media {tenant: $tenant})
    USING INDEX carrier:Node(session_id)
    WITH DISTINCT m
    RETURN m.sha256
  }) AS media_count,
  COLLECT {
    CALL (s) {
      MATCH (offered_by:Call {session_id: s.id})-[:OFFERED]->(t:ToolSet {tenant: $tenant})
      USING INDEX offered_by:Call(session_id)
      RETURN t
      UNION
      MATCH (s)-[:TOOL_SET_VERSION]->(:ToolSetVersion)-[:OFFERS]->(t:ToolSet {tenant: $tenant})
      RETURN t
    }
    RETURN {sha256: t.sha256, tools: t.tools} AS tool_set
    ORDER BY tool_set.sha256
  } AS tool_sets,
  COLLECT {
    MATCH (s)-[:TOOL_SET_VERSION]->(v:ToolSetVersion)
    RETURN {properties: properties(v)} AS version ORDER BY v.version
  } AS tool_set_versions,
  COLLECT {
    MATCH (s)-[l:LABELED]->(n:Node)
    RETURN {node_id: n.id, properties: l {.text, .labeled_at}} AS label ORDER BY label.node_id
  } AS labels,
  COLLECT {
    MATCH (s)-[named:NAMES]->(n:Node)
    RETURN {node_id: n.id, properties: properties(named)} AS name ORDER BY name.node_id
  } AS branch_names,
  COLLECT {
    MATCH (s)-[p:PINNED]->(n:Node)
    RETURN {node_id: n.id, properties: properties(p)} AS pin ORDER BY pin.node_id
  } AS pins
