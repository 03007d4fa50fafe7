// name: session_update
// returns: zero or one row {problem, session, strategy_changed, events}; problem 'meta_changed' when meta_version, or the extra_meta a new one was merged into, moved since the caller read them (session_meta_get; nothing is set then)
// purpose: sets title, the user's extra_meta and the summary strategy; optimistic on meta_version and the merged-into text so merges never lose a key
// params: session_id, tenant, title, set_title, extra_meta, expected_meta_version, expected_extra_meta, summary_strategy, recall, now
// $recall null leaves the session's recall setting (docs/guides/recall.md) as it is; a change
// bumps summary_version too: the summary stand-ins' text says whether they can be expanded.
// $summary_strategy null leaves it as it is; a change bumps summary_version, so a
// compaction whose render followed the old strategy is refused when it persists.
// meta_version is read after session_write_lock, so after any concurrent save has
// committed, from a fresh read of the session.
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_write_lock
// The session is read afresh after the lock: a read positioned on it before a concurrent
// save committed can see its properties as they were (that save's meta_version and
// extra_meta), and a merge based on them would drop the key the other save added.
WITH s
MATCH (fresh:Session {id: s.id, tenant: $tenant})
WITH fresh AS s,
  CASE WHEN coalesce(fresh.meta_version, 0) <> $expected_meta_version
    OR ($extra_meta IS NOT NULL AND coalesce(fresh.extra_meta, '{}') <> $expected_extra_meta)
    THEN 'meta_changed' END AS problem
WITH s, problem, problem IS NULL AND $summary_strategy IS NOT NULL
  AND coalesce(s.summary_strategy, 'rolling') <> $summary_strategy AS strategy_changed,
  problem IS NULL AND $recall IS NOT NULL AND coalesce(s.recall, false) <> $recall AS recall_changed
CALL (s, problem, strategy_changed, recall_changed) {
  WITH * WHERE problem IS NULL
  SET s.title = CASE WHEN $set_title THEN $title ELSE s.title END,
      s.extra_meta = coalesce($extra_meta, s.extra_meta),
      s.meta_version = coalesce(s.meta_version, 0) + 1,
      s.summary_strategy = coalesce($summary_strategy, s.summary_strategy),
      s.recall = coalesce($recall, s.recall),
      s.summary_version = coalesce(s.summary_version, 0)
        + CASE WHEN strategy_changed OR recall_changed THEN 1 ELSE 0 END
}
WITH s, problem, strategy_changed, CASE WHEN strategy_changed
  THEN [{type: 'summary_strategy_changed', strategy: s.summary_strategy}] ELSE [] END AS announced
// include: events_write
MATCH (s)-[:ROOT]->(r:Node)
MATCH (s)-[:HEAD]->(h:Node)
RETURN problem, strategy_changed, events, s {
  .*, root_id: r.id, head_id: h.id,
  active_summary: [(s)-[:ACTIVE_SUMMARY]->(a:Node) | a {.id, .content}][0]
} AS session
