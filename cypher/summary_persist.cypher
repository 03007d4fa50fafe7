// name: summary_persist
// returns: one row {problem, invalid_reads, summary, covers_ids, events}; summary and covers_ids are null when problem is set; no row when the session does not exist
// purpose: compaction's only write: one summary node spliced after the segment's predecessor, COVERS edges to the turns it newly covers, ENDS_AT to its segment's last turn, ABSORBED to the summary it relays, REPLACED to the active summary it replaces, the session's active summary moved; HEAD untouched
// params: session_id, tenant, summary_id, content, tokens, metadata, now, new_ids, absorbed_id, expected_version, strategy, instructions, compacted_head_id, retained_ids, nested_ids, call, announce
// Coverage is always real turns: the absorbed summary's segment extended by $new_ids. Only
// the new turns get COVERS edges (the absorbed summary holds the rest), so a persist
// writes what it newly covers, not the whole history.
// $retained_ids: the compacted head's chain below the segment, down to $compacted_head_id.
// $nested_ids: a nested summary's merged summaries, chain order (segmented, docs/segmented.md):
// live and unretired, their segments tiling $new_ids, which is then their union; else [].
// $instructions (the focus instructions the summarizer was given) is set only when not
// null, so a summary compacted without them has no such property.
// summary_version is read after session_lock, so two compactions (or a compaction and an
// uncompact or a strategy change) that raced are serialized there and the later one sees
// that what its render chose may have changed. The strategy is compared too: a render read
// beside a strategy change's commit can pair the new version with the old strategy.
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
CALL (s) {
  UNWIND range(0, size($retained_ids) - 1) AS i
  OPTIONAL MATCH (r:Node {id: $retained_ids[i], tenant: $tenant})
  RETURN collect({
    pred_id: [(r)-[:PREDECESSOR]->(p:Node) | p.id][0],
    ok: r IS NOT NULL AND r.session_id = s.id AND r.role <> 'summary' AND r.deleted_at IS NULL
  }) AS retained
}
CALL (s) {
  UNWIND $nested_ids AS nested_id
  OPTIONAL MATCH (x:Node {id: nested_id, tenant: $tenant})
  RETURN collect(CASE WHEN x IS NULL THEN {} ELSE x {.session_id, .role, .deleted_at,
    .retired_at, .covers_first_id, .covers_last_id} END) AS nested
}
// include: call_reads_check
WITH s, seq, active, absorbed, new_turns, retained, nested, call_reads, invalid_reads,
  CASE
    WHEN coalesce(s.summary_version, 0) <> $expected_version
      OR coalesce(s.summary_strategy, 'rolling') <> $strategy THEN 'summary_changed'
    WHEN size(new_turns) = 0 THEN 'nothing_covered'
    WHEN any(e IN new_turns WHERE NOT e.ok) THEN 'covered_invalid'
    WHEN any(i IN range(1, size(new_turns) - 1) WHERE new_turns[i].pred_id <> $new_ids[i - 1])
      THEN 'covered_not_contiguous'
    WHEN $absorbed_id IS NOT NULL AND (absorbed IS NULL OR absorbed.session_id <> s.id
      OR absorbed.role <> 'summary' OR absorbed.deleted_at IS NOT NULL
      OR absorbed.retired_at IS NOT NULL OR ($strategy = 'rolling' AND absorbed <> active))
      THEN 'absorbed_not_active'
    WHEN $absorbed_id IS NOT NULL AND new_turns[0].pred_id <> absorbed.covers_last_id
      THEN 'coverage_not_extended'
    WHEN any(e IN retained WHERE NOT e.ok)
      OR any(i IN range(0, size(retained) - 1)
             WHERE retained[i].pred_id <> CASE i WHEN 0 THEN $new_ids[-1] ELSE $retained_ids[i - 1] END)
      OR $compacted_head_id <> coalesce($retained_ids[-1], $new_ids[-1])
      THEN 'retained_not_contiguous'
    WHEN size(nested) > 0 AND (
      any(x IN nested WHERE x.session_id IS NULL OR x.session_id <> s.id
          OR x.role <> 'summary' OR x.deleted_at IS NOT NULL OR x.retired_at IS NOT NULL)
      OR nested[0].covers_first_id <> $new_ids[0] OR nested[-1].covers_last_id <> $new_ids[-1])
      THEN 'nested_invalid'
    WHEN size(invalid_reads) > 0 THEN 'read_invalid'
  END AS problem
OPTIONAL CALL (s, seq, active, absorbed, new_turns, problem, call_reads) {
  WITH * WHERE problem IS NULL
  WITH s, seq, active, absorbed, call_reads, [e IN new_turns | e.node] AS covered
  WITH s, seq, active, absorbed, call_reads, covered, covered[0] AS first
  MATCH (first)-[:PREDECESSOR]->(first_predecessor:Node)
  // An absorbed summary already stands at the segment's splice point.
  OPTIONAL MATCH (absorbed)-[:PREDECESSOR]->(absorbed_splice:Node)
  WITH s, seq, active, absorbed, call_reads, covered,
    coalesce(absorbed_splice, first_predecessor) AS splice
  CREATE (summary:Node {
    id: $summary_id, session_id: s.id, tenant: s.tenant, role: 'summary', content: $content,
    created_at: $now, tokens: $tokens, metadata: $metadata, seq: seq,
    depth: splice.depth + 1, side_branch: splice.side_branch,
    strategy: $strategy, superseded_summary: false, absorbed_id: $absorbed_id,
    covers_count: coalesce(absorbed.covers_count, 0) + size(covered),
    covers_new_count: size(covered),
    covers_first_id: coalesce(absorbed.covers_first_id, covered[0].id),
    covers_last_id: covered[-1].id, instructions: $instructions,
    compacted_head_id: $compacted_head_id, retained_ids: $retained_ids,
    replaced_id: active.id,
    nested_ids: CASE WHEN size($nested_ids) > 0 THEN $nested_ids END
  })
  CREATE (summary)-[:PREDECESSOR]->(splice)
  // The segment's end, for the segmented render's walk (fragment applicable_summary).
  WITH s, active, absorbed, covered, summary, call_reads, covered[-1] AS last
  CREATE (summary)-[:ENDS_AT]->(last)
  WITH s, active, absorbed, covered, summary, call_reads
  CALL (summary, covered) {
    UNWIND range(0, size(covered) - 1) AS i
    WITH summary, i, covered[i] AS c
    CREATE (summary)-[:COVERS {order: i}]->(c)
  }
  CALL (summary, absorbed) {
    WITH * WHERE absorbed IS NOT NULL
    CREATE (summary)-[:ABSORBED]->(absorbed)
  }
  CALL (s, active, summary) {
    WITH * WHERE active IS NOT NULL
    CREATE (summary)-[:REPLACED]->(active)
    SET active.superseded_summary = true
    WITH s
    MATCH (s)-[old:ACTIVE_SUMMARY]->(:Node)
    DELETE old
  }
  CREATE (s)-[:ACTIVE_SUMMARY]->(summary)
  SET s.summary_version = coalesce(s.summary_version, 0) + 1
  WITH s, summary, summary AS produced, call_reads
  // include: call_write
  RETURN summary AS n, COLLECT {
    MATCH (summary)-[:ABSORBED*0..]->(a:Node)-[c:COVERS]->(x:Node)
    RETURN x.id ORDER BY a.covers_count, c.order
  } AS covers_ids
}
// $announce: the compaction_finished event's trigger and token counts, or null for none.
WITH *, $announce AS announcement
WITH *, CASE WHEN problem IS NULL AND announcement IS NOT NULL
  THEN [announcement {.*, type: 'compaction_finished', summary_id: n.id,
                      covered_count: size(covers_ids)}]
  ELSE [] END AS announced
// include: events_write
RETURN problem, invalid_reads, events,
  // include: node_map
  AS summary, covers_ids
