// name: transcript_stored
// returns: one row {next_seq, stored_ids, live, labels, title, source, tool, source_bytes, source_prefix_sha256, replaced} when the tenant holds the session; none otherwise
// purpose: which of an imported transcript's derived node ids its session holds already (and of those live, {id, seq, digest}: the mapping digest it was written with, null for a node imported before digests were kept), the labels those of $label_node_ids hold ({node_id, text}), the session's title and source (what an import last said it came from), and the stored turns the transcript's grown tail replaces ({id, predecessor_id, metadata}: every live turn below a stored predecessor of a new turn that the transcript no longer holds, with what hangs from it), so a re-import writes only what the file gained
// params: session_id, tenant, node_ids, label_node_ids, new_turns
// $new_turns: [{id, predecessor_id, side_branch}] of the document's turns (summaries and
// side branches' first turns apart); those already stored are skipped here. A side
// branch's turn replaces side-branch turns too, the conversation's only its own.
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN s.next_seq AS next_seq, s.title AS title, s.source AS source, s.tool AS tool,
  s.source_bytes AS source_bytes, s.source_prefix_sha256 AS source_prefix_sha256,
  [id IN $node_ids WHERE EXISTS { MATCH (n:Node {id: id}) USING INDEX n:Node(id)
                                   WHERE n.session_id = s.id }] AS stored_ids,
  COLLECT { UNWIND $node_ids AS id MATCH (n:Node {id: id}) USING INDEX n:Node(id)
            WHERE n.session_id = s.id AND n.deleted_at IS NULL
            RETURN {id: id, seq: n.seq, digest: n.source_digest} AS live } AS live,
  COLLECT { UNWIND $label_node_ids AS id MATCH (s)-[l:LABELED]->(:Node {id: id})
            RETURN {node_id: id, text: l.text} AS label } AS labels,
  COLLECT { UNWIND $new_turns AS turn
            MATCH (p:Node {id: turn.predecessor_id}) USING INDEX p:Node(id)
            WHERE p.session_id = s.id
              AND NOT EXISTS { MATCH (n:Node {id: turn.id}) USING INDEX n:Node(id)
                               WHERE n.session_id = s.id }
            MATCH (p)<-[:PREDECESSOR]-(top:Node)
            WHERE top.deleted_at IS NULL AND top.role <> 'summary'
              AND (NOT top.side_branch OR turn.side_branch)
              AND NOT top.id IN $node_ids
            MATCH (top)<-[:PREDECESSOR*0..]-(x:Node)
            WHERE x.deleted_at IS NULL
            MATCH (x)-[:PREDECESSOR]->(xp:Node)
            RETURN DISTINCT {id: x.id, top_id: top.id, predecessor_id: xp.id,
                             metadata: x.metadata} AS replaced } AS replaced
