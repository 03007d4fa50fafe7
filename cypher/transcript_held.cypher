// name: transcript_held
// returns: one row {id, properties, predecessor_id, caller_id, covers, carries_over} per live node of $node_ids the session holds
// purpose: the stored nodes of a grown transcript as their backup rows (nodes_import's shape), so the import finds those its document now maps otherwise (a turn re-hung, a summary keeping more) and rewrites them
// params: session_id, tenant, node_ids
MATCH (s:Session {id: $session_id, tenant: $tenant})
UNWIND $node_ids AS id
MATCH (n:Node {id: id, session_id: s.id})
WHERE n.deleted_at IS NULL
RETURN n.id AS id, properties(n) AS properties,
  [(n)-[:PREDECESSOR]->(p:Node) | p.id][0] AS predecessor_id,
  [(n)-[:CALLER]->(c:Node) | c.id][0] AS caller_id,
  COLLECT { MATCH (n)-[e:COVERS]->(x:Node)
            RETURN {node_id: x.id, order: e.order} AS cover ORDER BY e.order, x.id } AS covers,
  COLLECT { MATCH (n)-[e:CARRIES_OVER]->(x:Node)
            RETURN {node_id: x.id, order: e.order} AS carried ORDER BY e.order, x.id
  } AS carries_over
