// name: render_context
// returns: rows {index, part, problem, head_id, summary_id, stand_in_ids, strategy, recall, summary_version, kept_count, pinned_ids, hidden, nodes} per request whose session exists: its nodes in prompt order, 1,000 a row from `part` on (stand_in_ids, pinned_ids and hidden on part 0 only)
// purpose: what the model reads from a head: the chain from ROOT, with the summary that applies to the head (per the session's strategy) standing in for its segment, followed by the segment's pinned turns; nodes marked out_of_context left out
// params: requests, tenant
// $requests: [{session_id, head_id}] (head_id null: the session's HEAD).
// covers_ids is a contiguous chain segment, so "all of it is on the chain" is "its last node
// is an ancestor-or-self of the head": the walk goes up from the head only as deep as that
// node (fragment applicable_summary), and a compacted render never touches the covered
// history.
UNWIND range(0, size($requests) - 1) AS index
WITH index, $requests[index] AS request
MATCH (s:Session {id: request.session_id, tenant: $tenant})
// The summary version is read before the summaries are: under read committed a compaction
// that commits during this read then leaves the render with the older version, which the
// next write compares and finds moved (never a newer version beside an older summary).
WITH index, request, s, coalesce(s.summary_version, 0) AS summary_version
// Read committed: while an append swaps the HEAD edge, a reader may see neither edge.
OPTIONAL MATCH (s)-[:HEAD]->(current:Node)
OPTIONAL MATCH (given:Node {id: request.head_id, tenant: $tenant})
WITH index, s, summary_version,
  CASE WHEN request.head_id IS NULL THEN current ELSE given END AS h, request
WITH index, s, summary_version, h,
  CASE
    WHEN h IS NULL AND request.head_id IS NULL THEN 'head_moving'
    WHEN h IS NULL THEN 'node_not_found'
    WHEN h.session_id <> s.id THEN 'node_other_session'
    WHEN h.deleted_at IS NOT NULL THEN 'node_deleted'
    WHEN h.role = 'summary' THEN 'node_summary'
  END AS problem
OPTIONAL CALL (s, h, problem) {
  WITH * WHERE problem IS NULL
  // include: applicable_summary
}
OPTIONAL CALL (s, summary) {
  WITH * WHERE summary IS NOT NULL
  // The segment is the summary's COVERS and, through ABSORBED, its absorbed summaries'.
  MATCH (s)-[:PINNED]->(p:Node)
  WHERE EXISTS { (summary)-[:ABSORBED*0..]->(:Node)-[:COVERS]->(p) }
  CALL (p) {
    // include: pair_halves
  }
  WITH DISTINCT summary, held
  WHERE EXISTS { (summary)-[:ABSORBED*0..]->(:Node)-[:COVERS]->(held) }
  WITH held ORDER BY held.depth
  RETURN collect(held) AS kept
}
OPTIONAL CALL (summary, tail, kept, stand_ins) {
  WITH * WHERE summary IS NOT NULL AND stand_ins IS NULL
  MATCH (summary)-[:PREDECESSOR]->(splice:Node)-[:PREDECESSOR*0..]->(x:Node)
  WITH DISTINCT summary, tail, kept, x
  ORDER BY x.depth
  WITH summary, tail, kept, collect(x) AS prefix
  RETURN prefix + [summary] + coalesce(kept, []) + tail AS compacted
}
// Segmented: every stand-in is followed by its own segment's pinned turns (the last one's are
// `kept` above).
OPTIONAL CALL (s, summary, stand_ins) {
  WITH * WHERE summary IS NOT NULL AND stand_ins IS NOT NULL
  UNWIND range(0, size(stand_ins) - 1) AS i
  WITH s, i, stand_ins[i] AS n
  OPTIONAL CALL (s, n) {
    WITH * WHERE n.role = 'summary'
    MATCH (s)-[:PINNED]->(p:Node)
    WHERE EXISTS { (n)-[:ABSORBED*0..]->(:Node)-[:COVERS]->(p) }
    CALL (p) {
      // include: pair_halves
    }
    WITH DISTINCT n, held
    WHERE EXISTS { (n)-[:ABSORBED*0..]->(:Node)-[:COVERS]->(held) }
    WITH held ORDER BY held.depth
    RETURN collect(held) AS pinned_after
  }
  WITH i, [n] + coalesce(pinned_after, []) AS run ORDER BY i
  // Grouped by nothing, so an empty input still gives a row: the caller reads it only when a
  // stand-in applies.
  RETURN reduce(out = [], r IN collect(run) | out + r) AS segmented_render
}
OPTIONAL CALL (h, summary, chain, problem) {
  WITH * WHERE problem IS NULL AND summary IS NULL AND chain IS NULL
  MATCH (h)-[:PREDECESSOR*0..]->(x:Node)
  WITH DISTINCT x
  ORDER BY x.depth
  RETURN collect(x) AS walked
}
WITH index, problem, h, s, summary, stand_ins, summary_version, kept,
  coalesce(compacted,
      CASE WHEN summary IS NOT NULL AND stand_ins IS NOT NULL THEN segmented_render END, CASE WHEN summary IS NULL THEN coalesce(chain, walked) END, []) AS listed
WITH index, problem, h, s, summary, stand_ins, summary_version, kept, listed,
  // A node kept out of the context (an imported aborted reply, its results) is never read.
  [n IN listed
    WHERE n.out_of_context IS NULL |
    // include: node_map
  ] AS nodes
// The nodes come a part of 1,000 a row (`part`: the first one's place; the rest of the row
// only on part 0): Neo4j encodes a row whole in its network buffers, and a render of a long
// session never compacted, in one row, is more than they hold on a default heap (Neo4j then
// drops the connection). A render of 1,000 nodes or fewer is one row.
UNWIND range(0, CASE WHEN size(nodes) > 0 THEN size(nodes) - 1 ELSE 0 END, 1000) AS part
RETURN index, part, problem, h.id AS head_id, summary.id AS summary_id,
  CASE WHEN part = 0 THEN [x IN coalesce(stand_ins, []) WHERE x.role = 'summary' | x.id] END AS stand_in_ids,
  s.summary_strategy AS strategy, coalesce(s.recall, false) AS recall, summary_version, size(coalesce(kept, [])) AS kept_count,
  CASE WHEN part = 0 THEN COLLECT { MATCH (s)-[:PINNED]->(p:Node) RETURN p.id } END AS pinned_ids,
  // The nodes kept out among them, each with the read node after it (null: none), so that a
  // compaction's segment holds those inside it (chain segments have no holes).
  CASE WHEN part = 0 THEN [i IN range(0, size(listed) - 1) WHERE listed[i].out_of_context |
    [listed[i].id, head([j IN range(i + 1, size(listed) - 1)
                         WHERE listed[j].out_of_context IS NULL | listed[j].id])]] END AS hidden,
  nodes[part..part + 1000] AS nodes
