// name: fork_sibling
// returns: one row {problem, invalid_reads, open_tool_uses, unanswered, unmatched_results, taken_tool_uses, missing_media, session_id, head_moved, previous_head_id, summary_version, tool_set, node, events}; node is null when problem is set
// purpose: retry and edit — a new sibling of node $fork_of (same predecessor, same role, new content) in that node's session; HEAD moves onto it, and the model call that produced it is recorded
// params: blocks, tool_uses, answers, answer_errors, media, media_refs, tenant, fork_of, node_id, role, content, thinking, tokens, metadata, now, call, offer_tools, tools_to_check
// $role names the move: 'assistant' retries a reply, 'user' edits a message. The session is
// the forked node's, so it is read before session_lock; everything else is read after it.
OPTIONAL MATCH (fork:Node {id: $fork_of, tenant: $tenant})
OPTIONAL MATCH (s:Session {id: fork.session_id, tenant: $tenant})
// include: session_lock
OPTIONAL MATCH (s)-[:HEAD]->(head:Node)
OPTIONAL MATCH (fork)-[:PREDECESSOR]->(pred:Node)
// include: call_reads_check
// include: pairing_check
// An edit opens a turn: with $offer_tools it reads the set its call is offered (a retry's
// reply is written after its call, which read the set before).
// include: tool_set_offered
WITH s, seq, head, pred, null AS caller, call_reads, invalid_reads, open_tool_uses,
  unanswered, unmatched_results, taken_tool_uses, missing_media, tool_set, fork.id AS fork_id,
  false AS side_branch, true AS moves_head,
  CASE
    WHEN fork IS NULL OR s IS NULL THEN 'fork_not_found'
    WHEN fork.deleted_at IS NOT NULL THEN 'fork_deleted'
    WHEN pred IS NULL THEN 'fork_is_root'
    WHEN fork.role <> $role AND $role = 'assistant' THEN 'wrong_role_retry'
    WHEN fork.role <> $role THEN 'wrong_role_edit'
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
