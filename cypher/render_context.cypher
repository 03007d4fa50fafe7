// name: render_context
// returns: one row {index, problem, head_id, summary_id, active_summary_id, nodes} per request whose session exists; nodes in prompt order
// purpose: what the model reads from a head: the chain from ROOT, with the active summary standing in for its segment when the whole segment lies on that chain (spec §3)
// params: requests, tenant
// $requests: [{session_id, head_id}] (head_id null: the session's HEAD).
// covers_ids is a contiguous chain segment, so "all of it is on the chain" is "its last node
// is an ancestor-or-self of the head": the walk goes up from the head only as deep as that
// node, and a compacted render never touches the covered history.
UNWIND range(0, size($requests) - 1) AS index
WITH index, $requests[index] AS request
MATCH (s:Session {id: request.session_id, tenant: $tenant})
// Read committed: while an append swaps the HEAD edge, a reader may see neither edge.
OPTIONAL MATCH (s)-[:HEAD]->(current:Node)
OPTIONAL MATCH (given:Node {id: request.head_id, tenant: $tenant})
WITH index, s, CASE WHEN request.head_id IS NULL THEN current ELSE given END AS h, request
WITH index, s, h,
  CASE
    WHEN h IS NULL AND request.head_id IS NULL THEN 'head_moving'
    WHEN h IS NULL THEN 'node_not_found'
    WHEN h.session_id <> s.id THEN 'node_other_session'
    WHEN h.deleted_at IS NOT NULL THEN 'node_deleted'
    WHEN h.role = 'summary' THEN 'node_summary'
  END AS problem
OPTIONAL MATCH (s)-[:ACTIVE_SUMMARY]->(active:Node)
WITH index, h, problem, active, CASE WHEN active.deleted_at IS NULL THEN active END AS summary
OPTIONAL MATCH (last:Node {id: summary.covers_last_id})
OPTIONAL CALL (h, last, problem) {
  // Up from the head, never deeper than the segment's last node (the predicate on every
  // node of the walk prunes it); the shallowest node reached must be that last node.
  WITH * WHERE problem IS NULL AND last.depth <= h.depth
  MATCH up = (h)-[:PREDECESSOR*0..]->(x:Node)
  WHERE all(n IN nodes(up) WHERE n.depth >= last.depth)
  WITH DISTINCT last, x
  ORDER BY x.depth
  WITH last, collect(x) AS walked
  WHERE walked[0] = last
  RETURN walked[1..] AS tail
}
OPTIONAL CALL (summary, tail) {
  WITH * WHERE tail IS NOT NULL
  MATCH (summary)-[:PREDECESSOR]->(splice:Node)-[:PREDECESSOR*0..]->(x:Node)
  WITH DISTINCT summary, tail, x
  ORDER BY x.depth
  WITH summary, tail, collect(x) AS prefix
  RETURN prefix + [summary] + tail AS compacted
}
OPTIONAL CALL (h, tail, problem) {
  // Rows of distinct ancestors, not a path value: a path of many thousand hops overflows
  // the server's stack when it is encoded, and this form is expanded without keeping paths.
  WITH * WHERE problem IS NULL AND tail IS NULL
  MATCH (h)-[:PREDECESSOR*0..]->(x:Node)
  WITH DISTINCT x
  ORDER BY x.depth
  RETURN collect(x) AS verbatim
}
RETURN index, problem, h.id AS head_id,
  CASE WHEN tail IS NULL THEN null ELSE summary.id END AS summary_id,
  active.id AS active_summary_id,
  [n IN coalesce(compacted, verbatim, []) |
    // include: node_map
  ] AS nodes
