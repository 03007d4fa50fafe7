// name: summary_persist
// returns: one row {problem, invalid_reads, summary, covers_ids}; summary and covers_ids are null when problem is set; no row when the session does not exist
// purpose: compaction's only write (spec §2): one summary node spliced after the segment's predecessor, COVERS edges in chain order, the active summary moved; HEAD untouched
// params: session_id, tenant, summary_id, content, tokens, metadata, now, new_ids, absorbed_id, expected_active_id, strategy, instructions, call
// $instructions (the focus instructions the summarizer was given) is set only when not
// null, so a summary compacted without them has no such property.
// Coverage is always real turns: the absorbed summary's segment extended by $new_ids.
// The active summary is read after session_lock, so two compactions that raced through the
// summarizer are serialized there and the second sees that the active summary changed.
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_lock
OPTIONAL MATCH (s)-[:ACTIVE_SUMMARY]->(active:Node)
OPTIONAL MATCH (absorbed:Node {id: $absorbed_id, tenant: $tenant})
CALL (s) {
  UNWIND range(0, size($new_ids) - 1) AS i
  OPTIONAL MATCH (c:Node {id: $new_ids[i], tenant: $tenant})
  RETURN collect({
    node: c,
    pred_id: [(c)-[:PREDECESSOR]->(p:Node) | p.id][0],
    ok: c IS NOT NULL AND c.session_id = s.id AND c.role <> 'summary' AND c.deleted_at IS NULL
  }) AS new_turns
}
WITH s, seq, active, absorbed, new_turns,
  COLLECT { MATCH (absorbed)-[c:COVERS]->(x:Node) RETURN x ORDER BY c.order } AS old_turns
// include: call_reads_check
WITH s, seq, active, absorbed, new_turns, old_turns, invalid_reads,
  CASE
    WHEN coalesce(active.id, '') <> coalesce($expected_active_id, '') THEN 'summary_changed'
    WHEN size(new_turns) = 0 THEN 'nothing_covered'
    WHEN any(e IN new_turns WHERE NOT e.ok) THEN 'covered_invalid'
    WHEN any(i IN range(1, size(new_turns) - 1) WHERE new_turns[i].pred_id <> $new_ids[i - 1])
      THEN 'covered_not_contiguous'
    WHEN $absorbed_id IS NOT NULL AND (absorbed IS NULL OR absorbed <> active) THEN 'absorbed_not_active'
    WHEN $absorbed_id IS NOT NULL AND new_turns[0].pred_id <> absorbed.covers_last_id
      THEN 'coverage_not_extended'
    WHEN size(invalid_reads) > 0 THEN 'read_invalid'
  END AS problem
OPTIONAL CALL (s, seq, active, old_turns, new_turns, problem) {
  WITH * WHERE problem IS NULL
  WITH s, seq, active, old_turns + [e IN new_turns | e.node] AS covered
  WITH s, seq, active, covered, covered[0] AS first
  MATCH (first)-[:PREDECESSOR]->(splice:Node)
  CREATE (summary:Node {
    id: $summary_id, session_id: s.id, tenant: s.tenant, role: 'summary', content: $content,
    created_at: $now, tokens: $tokens, metadata: $metadata, seq: seq,
    depth: splice.depth + 1, side_branch: splice.side_branch,
    strategy: $strategy, superseded_summary: false, absorbed_id: $absorbed_id,
    covers_count: size(covered), covers_first_id: covered[0].id,
    covers_last_id: covered[-1].id, instructions: $instructions
  })
  CREATE (summary)-[:PREDECESSOR]->(splice)
  WITH s, active, covered, summary, splice
  CALL (summary, covered) {
    UNWIND range(0, size(covered) - 1) AS i
    WITH summary, i, covered[i] AS c
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
  WITH s, summary, splice, covered, summary AS produced
  // include: call_write
  RETURN summary AS n, [c IN covered | c.id] AS covers_ids
}
RETURN problem, invalid_reads,
  // include: node_map
  AS summary, covers_ids
