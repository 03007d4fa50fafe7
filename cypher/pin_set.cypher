// name: pin_set
// returns: one row {problem, session_id, pinned, pinned_tokens, events}; no row when the node does not exist for the tenant
// purpose: pins a node: a PINNED relationship from its session (pinned_at), so the node itself never changes; moves summary_version (what renders changes) and announces node_pinned; a pinned node again writes nothing; HEAD untouched
// params: node_id, tenant, now, max_pinned_tokens
// $max_pinned_tokens: what ROOT and every live pinned node with the other half of its tool
// pairs may hold at most (docs/concepts/annotations.md); pinned_tokens is what they would hold with this pin.
MATCH (n:Node {id: $node_id, tenant: $tenant})
MATCH (s:Session {id: n.session_id, tenant: $tenant})
// include: session_write_lock
WITH s, n
MATCH (s)-[:ROOT]->(root:Node)
WITH s, n, root, EXISTS { (s)-[:PINNED]->(n) } AS already
CALL (s, n) {
  MATCH (s)-[:PINNED]->(pinned:Node)
  WHERE pinned.deleted_at IS NULL
  RETURN pinned AS p
  UNION
  RETURN n AS p
}
CALL (p) {
  // include: pair_halves
}
WITH s, n, root, already,
  collect(DISTINCT CASE WHEN held.deleted_at IS NULL THEN held END) AS holds
WITH s, n, root, already,
  root.tokens + reduce(total = 0, h IN holds | total + coalesce(h.tokens, 0)) AS pinned_tokens
WITH s, n, already, pinned_tokens, CASE
    WHEN n.deleted_at IS NOT NULL THEN 'node_deleted'
    WHEN n.role = 'summary' THEN 'pin_summary'
    WHEN n = root THEN 'pin_root'
    WHEN NOT already AND pinned_tokens > $max_pinned_tokens THEN 'pins_over_budget'
  END AS problem
CALL (s, n, already, problem) {
  WITH * WHERE problem IS NULL AND NOT already
  CREATE (s)-[:PINNED {pinned_at: $now}]->(n)
  // A pin changes what a covered segment renders: remembered renders stop being extended.
  SET s.summary_version = coalesce(s.summary_version, 0) + 1
}
WITH s, n, problem, already, pinned_tokens, CASE WHEN problem IS NULL AND NOT already
  THEN [{type: 'node_pinned', node_id: n.id}] ELSE [] END AS announced
// include: events_write
RETURN problem, s.id AS session_id, problem IS NULL AS pinned, pinned_tokens, events
