// name: transcript_below
// returns: one row {replaced} per live node at or below a node of $top_ids ({id, top_id, predecessor_id, metadata}, as transcript_stored's replaced)
// purpose: the stored tail below each node a grown transcript maps otherwise than it was stored: what hangs from such a node is stale with it
// params: session_id, tenant, top_ids
MATCH (s:Session {id: $session_id, tenant: $tenant})
UNWIND $top_ids AS top_id
MATCH (top:Node {id: top_id, session_id: s.id})
MATCH (top)<-[:PREDECESSOR*0..]-(x:Node)
WHERE x.deleted_at IS NULL
MATCH (x)-[:PREDECESSOR]->(xp:Node)
RETURN DISTINCT {id: x.id, top_id: top.id, predecessor_id: xp.id,
                 metadata: x.metadata} AS replaced
