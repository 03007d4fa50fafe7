// name: append_message
// returns: one row {problem, invalid_reads, open_tool_uses, unanswered, unmatched_results, taken_tool_uses, missing_media, session_id, head_moved, previous_head_id, summary_version, tool_set, node, events}; node is null when problem is set; no row when the session does not exist
// purpose: adds a turn after a predecessor (default: HEAD), moving HEAD onto it only when its predecessor is HEAD and $advance_head holds, and records the model call that produced it
// params: blocks, tool_uses, answers, answer_errors, media, media_refs, session_id, tenant, node_id, role, content, thinking, tokens, metadata, now, predecessor_id, caller_id, side_branch, advance_head, call, offer_tools, tools_to_check
// HEAD is read after session_lock, so after any concurrent append has committed: of two
// appends on the same HEAD exactly one advances it, the other becomes a sibling fork.
// $advance_head is false for spawned sub-agent turns; $side_branch marks a spawned branch.
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_lock
MATCH (s)-[:HEAD]->(head:Node)
OPTIONAL MATCH (pred:Node {id: coalesce($predecessor_id, head.id), tenant: $tenant})
OPTIONAL MATCH (caller:Node {id: $caller_id, tenant: $tenant})
// include: call_reads_check
// include: pairing_check
// include: tool_set_offered
WITH s, seq, head, pred, caller, call_reads, invalid_reads, open_tool_uses, unanswered,
  unmatched_results, taken_tool_uses, missing_media, tool_set, null AS fork_id,
  $side_branch AS side_branch, coalesce($advance_head AND pred = head, false) AS moves_head,
  CASE
    WHEN pred IS NULL THEN 'predecessor_not_found'
    WHEN pred.session_id <> s.id THEN 'predecessor_other_session'
    WHEN pred.deleted_at IS NOT NULL THEN 'predecessor_deleted'
    WHEN pred.role = 'summary' THEN 'predecessor_summary'
    WHEN $caller_id IS NOT NULL AND caller IS NULL THEN 'caller_not_found'
    WHEN caller.session_id <> s.id THEN 'caller_other_session'
    WHEN caller.deleted_at IS NOT NULL THEN 'caller_deleted'
    WHEN size(invalid_reads) > 0 THEN 'read_invalid'
    WHEN size(unmatched_results) > 0 THEN 'tool_result_unmatched'
    WHEN size(unanswered) > 0 THEN 'tool_uses_open'
    WHEN size(taken_tool_uses) > 0 THEN 'tool_use_taken'
    WHEN size(missing_media) > 0 THEN 'media_not_found'
    WHEN any(name IN $tools_to_check
             WHERE tool_set.tools CONTAINS '"name":"' + name + '"') THEN 'tools_to_check'
  END AS problem
// include: node_write
WITH *, CASE WHEN problem IS NULL THEN
    [{type: 'node_appended', node_id: n.id, role: n.role, predecessor_id: pred.id}]
    + CASE WHEN head_moved THEN [{type: 'head_moved', previous_head_id: head.id, head_id: n.id}]
      ELSE [] END
  ELSE [] END AS announced
// include: events_write
RETURN problem, invalid_reads, open_tool_uses, unanswered, unmatched_results, taken_tool_uses,
  missing_media, events, s.id AS session_id, head_moved, head.id AS previous_head_id,
  coalesce(s.summary_version, 0) AS summary_version, tool_set,
  // include: node_map
  AS node
