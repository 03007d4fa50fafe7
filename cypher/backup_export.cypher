// name: backup_export
// returns: zero or one row {session, root_ids, head_ids, active_summary_ids, nodes, calls, media, tool_sets, tool_set_versions, labels, branch_names, pins}
// purpose: everything a backup needs to rebuild a session — its properties, every node (deleted and superseded ones too) and every call, with all their edges, the media its nodes carry, the tools its calls were offered and its tool set versions (setTools) with the tools they offer
// params: session_id, tenant
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
  COLLECT {
    MATCH (n:Node {session_id: s.id})
    USING INDEX n:Node(session_id)
    RETURN {
      properties: properties(n),
      predecessor_ids: [(n)-[:PREDECESSOR]->(p:Node) | p.id],
      caller_ids: [(n)-[:CALLER]->(c:Node) | c.id],
      covers: COLLECT {
        MATCH (n)-[e:COVERS]->(x:Node)
        RETURN {node_id: x.id, order: e.order} AS cover ORDER BY e.order, x.id
      },
      carries_over: COLLECT {
        MATCH (n)-[e:CARRIES_OVER]->(x:Node)
        RETURN {node_id: x.id, order: e.order} AS carried ORDER BY e.order, x.id
      }
    } AS node
    ORDER BY n.seq, n.id
  } AS nodes,
  COLLECT {
    MATCH (c:Call {session_id: s.id})
    USING INDEX c:Call(session_id)
    RETURN {
      properties: properties(c),
      reads: COLLECT {
        MATCH (c)-[e:READ]->(x:Node)
        RETURN {node_id: x.id, position: e.position} AS read ORDER BY e.position, x.id
      },
      produced_ids: [(c)-[:PRODUCED]->(o:Node) | o.id]
    } AS call
    ORDER BY c.started_at, c.id
  } AS calls,
  COLLECT {
    MATCH (carrier:Node {session_id: s.id})-[:CARRIES]->(m:Media {tenant: $tenant})
    USING INDEX carrier:Node(session_id)
    WITH DISTINCT m
    RETURN {sha256: m.sha256, media_type: m.media_type, data: m.data, bytes: m.bytes} AS medium
    ORDER BY medium.sha256
  } AS media,
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
