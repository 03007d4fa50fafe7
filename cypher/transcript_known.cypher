// name: transcript_known
// returns: one row {next_seq, title, source, tool, source_bytes, source_prefix_sha256, existing, live, labels, replaced} when the tenant holds the session; none otherwise
// purpose: transcript_stored for an importer that knows what it stored of the session last (a followed file, service/store/transcripts.py Known): of the ids it takes for new ($new_ids) those the session holds (existing), of the stored ones it maps otherwise now ($check_ids) those live ({id, seq, digest}), the labels $label_node_ids hold ({node_id, text}), the session's title and source, and the stored turns the transcript's grown tail replaces (as transcript_stored's replaced); its cost follows what the file gained, not the session
// params: session_id, tenant, new_ids, check_ids, label_node_ids, new_turns, kept_ids
// $new_turns: [{id, predecessor_id, side_branch}] of the transcript's new turns (as
// transcript_stored's); $kept_ids: the ids of the transcript's nodes under the same
// predecessors, which are not stale (transcript_stored names all its ids instead).
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN s.next_seq AS next_seq, s.title AS title, s.source AS source, s.tool AS tool,
  s.source_bytes AS source_bytes, s.source_prefix_sha256 AS source_prefix_sha256,
  COLLECT { UNWIND $new_ids AS id MATCH (n:Node {id: id}) USING INDEX n:Node(id)
            WHERE n.session_id = s.id
            RETURN id } AS existing,
  COLLECT { UNWIND $check_ids AS id MATCH (n:Node {id: id}) USING INDEX n:Node(id)
            WHERE n.session_id = s.id AND n.deleted_at IS NULL
            RETURN {id: id, seq: n.seq, digest: n.source_digest} AS live } AS live,
  COLLECT { UNWIND $label_node_ids AS id MATCH (s)-[l:LABELED]->(:Node {id: id})
            RETURN {node_id: id, text: l.text} AS label } AS labels,
  COLLECT { UNWIND $new_turns AS turn
            MATCH (p:Node {id: turn.predecessor_id}) USING INDEX p:Node(id)
            WHERE p.session_id = s.id
            MATCH (p)<-[:PREDECESSOR]-(top:Node)
            WHERE top.deleted_at IS NULL AND top.role <> 'summary'
              AND (NOT top.side_branch OR turn.side_branch)
              AND NOT top.id IN $kept_ids
            MATCH (top)<-[:PREDECESSOR*0..]-(x:Node)
            WHERE x.deleted_at IS NULL
            MATCH (x)-[:PREDECESSOR]->(xp:Node)
            RETURN DISTINCT {id: x.id, top_id: top.id, predecessor_id: xp.id,
                             metadata: x.metadata} AS replaced } AS replaced
