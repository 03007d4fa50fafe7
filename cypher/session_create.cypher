// name: session_create
// returns: one row {session}
// purpose: a new session with its ROOT node (the system prompt); HEAD starts on ROOT
// params: session_id, tenant, title, extra_meta, now, root_id, system_prompt, root_tokens, summary_strategy, recall, project
CREATE (s:Session {
  id: $session_id, tenant: $tenant, title: $title, extra_meta: $extra_meta,
  created_at: $now, updated_at: $now, next_seq: 1, summary_strategy: $summary_strategy,
  recall: $recall, project: $project, models: [], first_activity_at: $now,
  last_activity_at: $now, summary_version: 0, meta_version: 0, next_event_seq: 0, events_pruned_through: 0
})
CREATE (r:Node {
  id: $root_id, session_id: $session_id, tenant: $tenant, role: 'system',
  content: $system_prompt, created_at: $now, tokens: $root_tokens, metadata: '{}',
  seq: 0, depth: 0, side_branch: false
})
CREATE (s)-[:ROOT]->(r)
CREATE (s)-[:HEAD]->(r)
RETURN s {.*, root_id: r.id, head_id: r.id, active_summary: null} AS session
