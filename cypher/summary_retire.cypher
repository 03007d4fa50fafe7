// name: summary_retire
// returns: one row {problem, session_id, summary_id, restored_id, nested_in, events}; no row when the summary does not exist
// purpose: undoes a compaction: the summary stops applying anywhere (kept as a relic for provenance) and what applied before applies again; when it was the session's active summary, the pointer moves back to the one it replaced; HEAD untouched
// params: summary_id, tenant, now
// The active summary goes back along REPLACED (the active summary when each was written),
// past summaries that were retired (each undone itself: what applied before it applies), to
// the first that was not. That one is active again unless a branch deletion took it: then
// none is, as when the active summary itself is deleted (delete_branch) — the one it
// replaced does not come back, now or later.
MATCH (x:Node {id: $summary_id, tenant: $tenant, role: 'summary'})
MATCH (s:Session {id: x.session_id, tenant: $tenant})
// session_write_lock serializes a compaction racing this one.
// include: session_write_lock
WITH s, x
OPTIONAL MATCH (s)-[pointer:ACTIVE_SUMMARY]->(active:Node)
// A summary merged into a live nested one: the nested one stands in for its segment.
WITH s, x, pointer, active, COLLECT {
  MATCH (n:Node {session_id: s.id, role: 'summary'})
  WHERE x.id IN n.nested_ids AND n.deleted_at IS NULL AND n.retired_at IS NULL
  RETURN n.id
}[0] AS nested_in
WITH s, x, pointer, active, nested_in,
  CASE
    WHEN x.deleted_at IS NOT NULL THEN 'summary_deleted'
    WHEN x.retired_at IS NOT NULL THEN 'summary_retired'
    WHEN nested_in IS NOT NULL THEN 'summary_nested'
  END AS problem
OPTIONAL CALL (s, x, problem, pointer, active) {
  WITH * WHERE problem IS NULL
  SET x.retired_at = $now, x.superseded_summary = true,
      s.summary_version = coalesce(s.summary_version, 0) + 1
  WITH s, x, pointer, active
  OPTIONAL CALL (s, x, pointer, active) {
    WITH * WHERE active = x
    OPTIONAL MATCH back = (x)-[:REPLACED*]->(earlier:Node)
    WHERE earlier.retired_at IS NULL
      AND all(between IN nodes(back)[1..-1] WHERE between.retired_at IS NOT NULL)
    WITH s, pointer, earlier ORDER BY length(back) LIMIT 1
    WITH s, pointer, CASE WHEN earlier.deleted_at IS NULL THEN earlier END AS earlier
    DELETE pointer
    WITH s, earlier
    CALL (s, earlier) {
      WITH * WHERE earlier IS NOT NULL
      CREATE (s)-[:ACTIVE_SUMMARY]->(earlier)
      SET earlier.superseded_summary = false
    }
    RETURN earlier AS restored
  }
  RETURN CASE WHEN active = x THEN restored ELSE active END AS now_active
}
WITH s, x, problem, nested_in, now_active, CASE WHEN problem IS NULL
  THEN [{type: 'summary_retired', summary_id: x.id, restored_summary_id: now_active.id}]
  ELSE [] END AS announced
// include: events_write
RETURN problem, s.id AS session_id, x.id AS summary_id, now_active.id AS restored_id,
  nested_in, events
