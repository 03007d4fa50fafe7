// fragment applicable_summary: which summary head `h` of session `s` renders, as one row
// {summary, tail, chain}. The body of a `CALL (s, h) { ... }`; `h` is a live turn.
// summary: the summary standing in for its segment, or null (the chain renders verbatim).
// tail:    with a summary, the turns below its segment down to `h`, in chain order.
// chain:   when the whole chain from ROOT to `h` had to be walked, that chain (index = depth).
// stand_ins: under segmented only, what `h` renders before pins, ROOT first: the chain with
//           each segment that a summary stands in for replaced by that summary (docs/segmented.md);
//           summary is then the last stand-in and tail the turns after it.
// Which summaries count is the session's strategy (docs/concepts/strategies.md):
// rolling — the active summary alone, when its segment's last turn is on `h`'s chain;
// segmented — up from `h`, every live, unretired summary whose segment ends at a turn the
//           walk reaches (the newest of those ending there) stands in for its segment, and
//           the walk goes on from its splice: disjoint segments, nearest the head first;
// branch  — every live, unretired summary whose segment's last turn is on `h`'s chain and
//           whose compacted chain holds every turn of `h`'s chain below that segment that
//           existed when it was written; the deepest segment wins, then the newest summary.
// The common case walks only the retained tail: up from `h` to the first turn that ends the
// segment of a candidate `h` itself does not rule out (`h` existed when it was written and
// was not on its compacted chain). Only when that turn's candidates all refuse a turn
// between it and `h` (a branch that existed elsewhere when they were written and has grown
// since) is the whole chain walked and every candidate weighed.
OPTIONAL MATCH (s)-[:ACTIVE_SUMMARY]->(active:Node)
WITH s, h, coalesce(s.summary_strategy, 'rolling') AS strategy, active
// Bound before the walk (not inside it), so the planner prunes the walk by its depth.
OPTIONAL MATCH (last:Node {id: CASE WHEN strategy = 'rolling' THEN active.covers_last_id END})
OPTIONAL CALL (h, active, last) {
  WITH * WHERE last.depth <= h.depth
  // Up from the head, never deeper than the segment's last node (the predicate on every
  // node of the walk prunes it); the shallowest node reached must be that last node.
  MATCH up = (h)-[:PREDECESSOR*0..]->(x:Node)
  WHERE all(n IN nodes(up) WHERE n.depth >= last.depth)
  WITH DISTINCT active, last, x
  ORDER BY x.depth
  WITH active, last, collect(x) AS walked
  WHERE walked[0] = last
  RETURN active AS rolling_summary, walked[1..] AS rolling_tail
}
// The shallowest segment end a branch-strategy walk may stop at (null: no candidate).
// The index is named: on a small store the planner may otherwise scan every node.
OPTIONAL CALL (s, h, strategy) {
  WITH * WHERE strategy = 'branch'
  MATCH (c:Node {session_id: s.id, role: 'summary'})
  USING INDEX c:Node(session_id, role)
  WHERE c.deleted_at IS NULL AND c.retired_at IS NULL
    AND c.depth + c.covers_count - 1 <= h.depth
  RETURN min(c.depth + c.covers_count - 1) AS floor
}
OPTIONAL CALL (h, floor) {
  WITH * WHERE floor IS NOT NULL
  MATCH (h) ((a:Node)-[:PREDECESSOR]->(:Node)
    WHERE a.depth > floor AND NOT EXISTS {
      (a)<-[:COVERS]-(c:Node)
      WHERE c.covers_last_id = a.id AND c.deleted_at IS NULL AND c.retired_at IS NULL
        AND (c.retained_ids IS NULL OR a = h OR h.seq > c.seq OR h.id IN c.retained_ids)
    })* (x:Node)
  WHERE EXISTS {
    (x)<-[:COVERS]-(c:Node)
    WHERE c.covers_last_id = x.id AND c.deleted_at IS NULL AND c.retired_at IS NULL
      AND (c.retained_ids IS NULL OR x = h OR h.seq > c.seq OR h.id IN c.retained_ids)
  }
  RETURN x AS stop, a AS below
}
// Segmented: one walk up from `h` to ROOT, through the tail and the stand-ins only. From a
// node that ends a counting segment (its ENDS_AT edges) the next step is to its summary (the
// newest ending there), from any other node (a summary too) to its predecessor; so the walk
// is one path whose length, and whose reads, are the render's, never the covered history's.
OPTIONAL CALL (h, strategy) {
  WITH * WHERE strategy = 'segmented'
  MATCH (h) ((a:Node)-[r:PREDECESSOR|ENDS_AT
      WHERE (type(r) = 'PREDECESSOR' AND startNode(r) = a)
         OR (type(r) = 'ENDS_AT' AND endNode(r) = a)]-(b:Node)
    WHERE (type(r) = 'PREDECESSOR' AND NOT EXISTS {
             (a)<-[:ENDS_AT]-(c:Node) WHERE c.deleted_at IS NULL AND c.retired_at IS NULL })
       OR (type(r) = 'ENDS_AT' AND b.deleted_at IS NULL AND b.retired_at IS NULL
           AND NOT EXISTS {
             (a)<-[:ENDS_AT]-(c:Node)
             WHERE c.deleted_at IS NULL AND c.retired_at IS NULL AND c.seq > b.seq }))* (top:Node)
  WHERE NOT EXISTS { (top)-[:PREDECESSOR]->(:Node) }
  WITH reverse(a + [top]) AS walk
  // A segment's last turn is walked only to reach its summary: the summary renders, it not.
  WITH [i IN range(0, size(walk) - 1) WHERE i = 0 OR walk[i - 1].role <> 'summary' | walk[i]]
    AS stand_ins
  WITH stand_ins,
    [i IN range(0, size(stand_ins) - 1) WHERE stand_ins[i].role = 'summary'] AS at
  RETURN stand_ins,
    CASE WHEN size(at) > 0 THEN stand_ins[at[-1]] END AS segmented_summary,
    CASE WHEN size(at) > 0 THEN stand_ins[at[-1] + 1..] END AS segmented_tail,
    CASE WHEN size(at) = 0 THEN stand_ins END AS segmented_chain
}
WITH s, h, strategy, rolling_summary, rolling_tail, stop, below, stand_ins, segmented_summary,
  segmented_tail, segmented_chain, COLLECT {
  MATCH (stop)<-[:COVERS]-(c:Node)
  WHERE c.covers_last_id = stop.id AND c.deleted_at IS NULL AND c.retired_at IS NULL
    AND (c.retained_ids IS NULL OR all(n IN below WHERE n.seq > c.seq OR n.id IN c.retained_ids))
  RETURN c ORDER BY c.seq DESC LIMIT 1
}[0] AS nearest
OPTIONAL CALL (s, h, stop, nearest) {
  WITH * WHERE stop IS NOT NULL AND nearest IS NULL
  // Rows of distinct ancestors, not a path value: a path of many thousand hops overflows
  // the server's stack when it is encoded, and this form is expanded without keeping paths.
  MATCH (h)-[:PREDECESSOR*0..]->(y:Node)
  WITH DISTINCT s, h, y
  ORDER BY y.depth
  WITH s, h, collect(y) AS whole
  RETURN whole, COLLECT {
    MATCH (c:Node {session_id: s.id, role: 'summary'})
    USING INDEX c:Node(session_id, role)
    WHERE c.deleted_at IS NULL AND c.retired_at IS NULL
      AND c.depth + c.covers_count - 1 <= h.depth
      AND whole[c.depth + c.covers_count - 1].id = c.covers_last_id
      AND (c.retained_ids IS NULL OR all(n IN whole[c.depth + c.covers_count..]
                                         WHERE n.seq > c.seq OR n.id IN c.retained_ids))
    RETURN c ORDER BY c.depth + c.covers_count DESC, c.seq DESC LIMIT 1
  }[0] AS weighed
}
RETURN
  CASE strategy WHEN 'rolling' THEN rolling_summary WHEN 'segmented' THEN segmented_summary
    ELSE coalesce(nearest, weighed) END AS summary,
  CASE
    WHEN strategy = 'rolling' THEN rolling_tail
    WHEN strategy = 'segmented' THEN segmented_tail
    WHEN nearest IS NOT NULL THEN reverse(below)
    WHEN weighed IS NOT NULL THEN whole[weighed.depth + weighed.covers_count..]
  END AS tail,
  coalesce(whole, segmented_chain) AS chain, stand_ins
