// name: draft_reply
// returns: one row {problem, invalid_reads, open_tool_uses, unanswered, unmatched_results, taken_tool_uses, missing_media, session_id, head_moved, previous_head_id, summary_version, node, events}; node is null when problem is set; no row when the draft does not exist (any more)
// purpose: completeTurn with a reply: the reply after the draft's tip with the call that produced it (reading exactly what the draft's request held), linked to the draft under $client_key; HEAD moves onto the reply only when HEAD is still the tip
// params: blocks, tool_uses, answers, answer_errors, media, media_refs, tenant, node_id, role, content, thinking, tokens, metadata, now, call, draft_id, client_key, keep_until
// The draft's tip, its state and HEAD are read after session_lock: of two completions of
// one draft exactly one writes a reply; one with a key already used learns it
// (draft_key_used) and is answered from the first. A HEAD that moved away from the tip
// (another message, a checkout, a retry, an edit, a rewind) stays where it is: the reply
// then ends a branch of its own (spec §5: only an append that extends HEAD advances it).
MATCH (d:Draft {id: $draft_id, tenant: $tenant})
MATCH (s:Session {id: d.session_id, tenant: $tenant})
// include: session_lock
// include: draft_state
MATCH (s)-[:HEAD]->(head:Node)
OPTIONAL MATCH (pred:Node {id: d.head_id, tenant: $tenant})
// include: call_reads_check
// include: pairing_check
WITH s, d, seq, head, pred, null AS caller, call_reads, invalid_reads, open_tool_uses,
  unanswered, unmatched_results, taken_tool_uses, missing_media, null AS fork_id,
  false AS side_branch, coalesce(pred = head, false) AS moves_head, true AS completes,
  CASE
    WHEN key_used THEN 'draft_key_used'
    WHEN completed THEN 'draft_completed'
    WHEN d.expires_at <= $now THEN 'draft_expired'
    WHEN pred IS NULL OR pred.session_id <> s.id OR pred.deleted_at IS NOT NULL
      THEN 'draft_tip_deleted'
    WHEN size(invalid_reads) > 0 THEN 'read_invalid'
    WHEN size(unmatched_results) > 0 THEN 'tool_result_unmatched'
    WHEN size(unanswered) > 0 THEN 'tool_uses_open'
    WHEN size(taken_tool_uses) > 0 THEN 'tool_use_taken'
    WHEN size(missing_media) > 0 THEN 'media_not_found'
  END AS problem
// include: node_write
// include: draft_attempt
WITH *, CASE WHEN problem IS NULL THEN
    [{type: 'node_appended', node_id: n.id, role: n.role, predecessor_id: pred.id}]
    + CASE WHEN head_moved THEN [{type: 'head_moved', previous_head_id: head.id, head_id: n.id}]
      ELSE [] END
  ELSE [] END AS announced
// include: events_write
RETURN problem, invalid_reads, open_tool_uses, unanswered, unmatched_results, taken_tool_uses,
  missing_media, events, s.id AS session_id, head_moved, head.id AS previous_head_id,
  coalesce(s.summary_version, 0) AS summary_version,
  // include: node_map
  AS node
