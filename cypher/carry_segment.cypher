// name: carry_segment
// returns: one row {problem, nodes} when the session exists; nodes (chain order, null when problem is set) are the turns a carry-over summarizes
// purpose: what a carry-over from `from` into `into` summarizes: from's chain below its common ancestor with into's chain (exclusive), down to from itself
// params: session_id, tenant, from_id, into_id
// Every depth of into's chain holds exactly one node, so "x is on into's chain" is
// "the node at x's depth there is x": both chains are walked once, never compared pairwise.
MATCH (s:Session {id: $session_id, tenant: $tenant})
OPTIONAL MATCH (f:Node {id: $from_id, tenant: $tenant})
OPTIONAL MATCH (t:Node {id: $into_id, tenant: $tenant})
// The walk needs both nodes, of one session; what else is wrong is the problem below.
OPTIONAL CALL (s, f, t) {
  WITH * WHERE f.session_id = s.id AND t.session_id = s.id
  MATCH (t)-[:PREDECESSOR*0..]->(y:Node)
  WITH DISTINCT f, t, y
  ORDER BY y.depth
  WITH f, t, collect(y) AS target_chain
  MATCH (f)-[:PREDECESSOR*0..]->(x:Node)
  WHERE x.depth > t.depth OR target_chain[x.depth] <> x
  WITH DISTINCT x
  ORDER BY x.depth
  RETURN collect(x) AS segment
}
WITH segment,
  CASE
    WHEN f IS NULL THEN 'from_not_found'
    WHEN f.session_id <> s.id THEN 'from_other_session'
    WHEN f.deleted_at IS NOT NULL THEN 'from_deleted'
    WHEN f.role = 'summary' THEN 'from_summary'
    WHEN t IS NULL THEN 'into_not_found'
    WHEN t.session_id <> s.id THEN 'into_other_session'
    WHEN t.deleted_at IS NOT NULL THEN 'into_deleted'
    WHEN t.role = 'summary' THEN 'into_summary'
    WHEN size(segment) = 0 THEN 'nothing_to_carry'
  END AS problem
RETURN problem,
  CASE WHEN problem IS NULL THEN [n IN segment |
    // include: node_map
  ] END AS nodes
