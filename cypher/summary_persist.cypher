// name: summary_persist
// returns: one row {problem, summary, superseded_id}; summary is null when problem is set
// purpose: compaction's only write (spec §2): one summary node spliced after the segment's predecessor, COVERS edges in chain order, the active summary moved; HEAD untouched
// params: session_id, tenant, summary_id, content, tokens, metadata, now, covered_ids, absorbed_id, expected_active_id, strategy
// The SET on the session takes its write lock, so two compactions that raced through the
// summarizer are serialized here and the second sees that the active summary changed.
MATCH (s:Session {id: $session_id, tenant: $tenant})
SET s.next_seq = s.next_seq + 1, s.updated_at = $now
WITH s, s.next_seq - 1 AS seq
OPTIONAL MATCH (s)-[:ACTIVE_SUMMARY]->(active:Node)
OPTIONAL MATCH (absorbed:Node {id: $absorbed_id, tenant: $tenant})
CALL (s) {
  UNWIND range(0, size($covered_ids) - 1) AS i
  OPTIONAL MATCH (c:Node {id: $covered_ids[i], tenant: $tenant})
  RETURN collect({
    i: i, node: c,
    pred_id: [(c)-[:PREDECESSOR]->(p:Node) | p.id][0],
    ok: c IS NOT NULL AND c.session_id = s.id AND c.role <> 'summary' AND c.deleted_at IS NULL
  }) AS covered
}
WITH s, seq, active, absorbed, covered,
  CASE
    WHEN coalesce(active.id, '') <> coalesce($expected_active_id, '') THEN 'summary_changed'
    WHEN size(covered) = 0 THEN 'nothing_covered'
    WHEN any(e IN covered WHERE NOT e.ok) THEN 'covered_invalid'
    WHEN any(e IN covered[1..] WHERE e.pred_id <> $covered_ids[e.i - 1]) THEN 'covered_not_contiguous'
    WHEN $absorbed_id IS NOT NULL AND (absorbed IS NULL OR absorbed <> active) THEN 'absorbed_not_active'
    WHEN $absorbed_id IS NOT NULL AND NOT (
      absorbed.covers_count <= size($covered_ids)
      AND $covered_ids[0] = absorbed.covers_first_id
      AND $covered_ids[absorbed.covers_count - 1] = absorbed.covers_last_id
    ) THEN 'coverage_not_extended'
  END AS problem
OPTIONAL CALL (s, seq, active, covered, problem) {
  WITH * WHERE problem IS NULL
  MATCH (first:Node {id: $covered_ids[0]})-[:PREDECESSOR]->(splice:Node)
  CREATE (summary:Node {
    id: $summary_id, session_id: s.id, tenant: s.tenant, role: 'summary', content: $content,
    created_at: $now, tokens: $tokens, metadata: $metadata, seq: seq,
    depth: splice.depth + 1, side_branch: splice.side_branch,
    strategy: $strategy, superseded_summary: false, absorbed_id: $absorbed_id,
    covers_count: size($covered_ids), covers_first_id: $covered_ids[0],
    covers_last_id: $covered_ids[-1]
  })
  CREATE (summary)-[:PREDECESSOR]->(splice)
  WITH s, active, covered, summary, splice
  CALL (summary, covered) {
    UNWIND covered AS e
    WITH summary, e.i AS i, e.node AS c
    CREATE (summary)-[:COVERS {order: i}]->(c)
  }
  CALL (s, active) {
    WITH * WHERE active IS NOT NULL
    SET active.superseded_summary = true
    WITH s
    MATCH (s)-[old:ACTIVE_SUMMARY]->(:Node)
    DELETE old
  }
  CREATE (s)-[:ACTIVE_SUMMARY]->(summary)
  RETURN summary {.*, predecessor_id: splice.id, caller_id: null} AS summary_map
}
RETURN problem, summary_map AS summary, active.id AS superseded_id
