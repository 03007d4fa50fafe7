// name: transcript_stored
// returns: one row {next_seq, stored_ids, labels, title, source} when the tenant holds the session; none otherwise
// purpose: which of an imported transcript's derived node ids its session holds already, and the labels those of $label_node_ids hold ({node_id, text}), so a re-import writes only what the file gained; the session's title and source (what an import last said it came from)
// params: session_id, tenant, node_ids, label_node_ids
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN s.next_seq AS next_seq, s.title AS title, s.source AS source,
  [id IN $node_ids WHERE EXISTS { (:Node {id: id, session_id: s.id}) }] AS stored_ids,
  COLLECT { UNWIND $label_node_ids AS id MATCH (s)-[l:LABELED]->(:Node {id: id})
            RETURN {node_id: id, text: l.text} AS label } AS labels
