// name: delete_branch
// returns: one row {problem, fork_point_id, deleted_ids, previous_head_id, head_id, events}
// purpose: tombstones a branch's exclusive nodes (everything below its fork point) and the summaries whose segment holds one of them; HEAD moves to the fork point if it was among them; the session's active summary, if among them, is active no more
// params: session_id, tenant, tip_id, now
// Nodes are flagged, never removed: calls that read them keep their READ edges.
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_write_lock
WITH s
MATCH (s)-[h:HEAD]->(head:Node)
OPTIONAL MATCH (tip:Node {id: $tip_id, tenant: $tenant})
WITH s, h, head, tip,
  CASE
    WHEN tip IS NULL THEN 'tip_not_found'
    WHEN tip.session_id <> s.id THEN 'tip_other_session'
    WHEN tip.deleted_at IS NOT NULL THEN 'tip_deleted'
    WHEN tip.role = 'summary' OR tip.side_branch THEN 'tip_not_a_branch'
    WHEN tip.depth = 0 THEN 'tip_is_root'
    WHEN EXISTS {
      (tip)<-[:PREDECESSOR]-(c:Node)
      WHERE c.deleted_at IS NULL AND c.role <> 'summary' AND NOT c.side_branch
    } THEN 'tip_not_a_tip'
  END AS problem
OPTIONAL CALL (s, h, head, tip, problem) {
  WITH * WHERE problem IS NULL
  // The fork point: the nearest ancestor that is ROOT or has another live user child.
  MATCH path = (tip)-[:PREDECESSOR]->+(fork:Node
    WHERE fork.depth = 0 OR COUNT {
      (fork)<-[:PREDECESSOR]-(c:Node)
      WHERE c.deleted_at IS NULL AND c.role <> 'summary' AND NOT c.side_branch
    } > 1)
  WITH s, h, head, fork, nodes(path)[-2] AS top
  ORDER BY fork.depth DESC
  LIMIT 1
  MATCH (top)<-[:PREDECESSOR*0..]-(x:Node)
  WHERE x.deleted_at IS NULL
  SET x.deleted_at = $now
  WITH s, h, head, fork, collect(x) AS doomed
  // A name names a live branch: the deleted tip's name is free again.
  CALL (s, doomed) {
    UNWIND doomed AS d
    MATCH (s)-[named:NAMES]->(d)
    DELETE named
  }
  // A summary whose segment holds a deleted turn can never stand in on a live chain again:
  // it goes too. Its segment is what it newly covers and, transitively, what the summaries
  // it absorbed cover.
  CALL (doomed) {
    UNWIND doomed AS d
    MATCH (summary:Node)-[:ABSORBED*0..]->(:Node)-[:COVERS]->(d)
    WHERE summary.deleted_at IS NULL
    WITH DISTINCT summary
    SET summary.deleted_at = $now
    RETURN collect(summary.id) AS summaries
  }
  // A deleted active summary leaves the session without one: the one it replaced does not
  // come back (nothing it replaced is restored later either: summary_retire).
  CALL (s) {
    MATCH (s)-[pointer:ACTIVE_SUMMARY]->(active:Node)
    WHERE active.deleted_at IS NOT NULL
    DELETE pointer
    SET active.superseded_summary = true
  }
  // The summaries that exist changed: a render or compaction that saw the old set is stale.
  FOREACH (_ IN CASE WHEN size(summaries) > 0 THEN [1] ELSE [] END |
    SET s.summary_version = coalesce(s.summary_version, 0) + 1)
  WITH s, h, head, fork, [d IN doomed | d.id] + summaries AS deleted_ids
  CALL (s, h, head, fork) {
    WITH * WHERE head.deleted_at IS NOT NULL
    DELETE h
    CREATE (s)-[:HEAD]->(fork)
  }
  RETURN fork.id AS fork_point_id, deleted_ids,
    CASE WHEN head.deleted_at IS NULL THEN head.id ELSE fork.id END AS new_head_id
}
WITH s, problem, tip, fork_point_id, deleted_ids, head, coalesce(new_head_id, head.id) AS head_id
WITH *, CASE WHEN problem IS NULL THEN
    [{type: 'branch_deleted', tip_id: tip.id, fork_point_id: fork_point_id, deleted_ids: deleted_ids}]
    + CASE WHEN head_id <> head.id
        THEN [{type: 'head_moved', previous_head_id: head.id, head_id: head_id}] ELSE [] END
  ELSE [] END AS announced
// include: events_write
RETURN problem, fork_point_id, deleted_ids, head.id AS previous_head_id, head_id, events
