// name: label_set
// returns: one row {problem, session_id, label, events}; no row when the node does not exist for the tenant
// purpose: labels a node (replacing its label, if any): a LABELED relationship from its session carries the text, so the node itself never changes; announces node_labeled; HEAD untouched
// params: node_id, tenant, text, now
// A label is data about a node, not part of it: nodes stay immutable, and one session
// relationship per labeled node holds the label (MERGE: a second label replaces the first).
MATCH (n:Node {id: $node_id, tenant: $tenant})
MATCH (s:Session {id: n.session_id, tenant: $tenant})
// include: session_write_lock
WITH s, n, CASE WHEN n.deleted_at IS NOT NULL THEN 'node_deleted' END AS problem
OPTIONAL CALL (s, n, problem) {
  WITH * WHERE problem IS NULL
  MERGE (s)-[l:LABELED]->(n)
  SET l.text = $text, l.labeled_at = $now, l.tenant = s.tenant, l.session_id = s.id
  RETURN l.text AS label
}
WITH s, n, problem, label, CASE WHEN problem IS NULL
  THEN [{type: 'node_labeled', node_id: n.id, label: label}] ELSE [] END AS announced
// include: events_write
RETURN problem, s.id AS session_id, label, events
