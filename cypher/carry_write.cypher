// name: carry_write
// returns: one row {problem, invalid_reads, unanswered, answers, session_id, head_moved, previous_head_id, summary_version, node, events}; node is null when problem is set; no row when the session does not exist
// purpose: a carry-over's only write: one carry node (role 'carry', the summary of the branch left) appended after `into`, CARRIES_OVER {order} edges to the turns it summarizes, the summarizer's call; HEAD moves onto it only when `into` is HEAD, or on a checkout from HEAD
// params: blocks, tool_uses, answers, answer_errors, media, media_refs, session_id, tenant, node_id, role, content, thinking, tokens, metadata, now, from_id, into_id, carried_ids, instructions, checkout, call
// $carried_ids: from's chain below its common ancestor with into (carry_segment), in chain
// order; checked again here under the session's lock, as the turns a carry node may stand
// for: live turns of the session, one chain segment ending at `from`, opening just below a
// node of into's chain. $checkout: the user's checkout from HEAD = `from` to `into`,
// which this write completes (HEAD moves from `from` onto the carry node); HEAD moved
// meanwhile is a conflict. Otherwise HEAD moves only when `into` is HEAD.
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_lock
MATCH (s)-[:HEAD]->(head:Node)
OPTIONAL MATCH (f:Node {id: $from_id, tenant: $tenant})
OPTIONAL MATCH (pred:Node {id: $into_id, tenant: $tenant})
WITH *, null AS caller
CALL (s) {
  UNWIND range(0, size($carried_ids) - 1) AS i
  OPTIONAL MATCH (c:Node {id: $carried_ids[i], tenant: $tenant})
  RETURN collect({
    node: c,
    pred: [(c)-[:PREDECESSOR]->(p:Node) | p][0],
    ok: c IS NOT NULL AND c.session_id = s.id AND c.role <> 'summary' AND c.deleted_at IS NULL
  }) AS carried
}
// include: call_reads_check
// include: pairing_check
WITH s, seq, head, f, pred, caller, carried, call_reads, invalid_reads, open_tool_uses,
  unanswered, unmatched_results, taken_tool_uses, missing_media, null AS fork_id,
  false AS side_branch, coalesce(pred = head OR $checkout, false) AS moves_head,
  CASE
    WHEN f IS NULL THEN 'from_not_found'
    WHEN f.session_id <> s.id THEN 'from_other_session'
    WHEN f.deleted_at IS NOT NULL THEN 'from_deleted'
    WHEN f.role = 'summary' THEN 'from_summary'
    WHEN pred IS NULL THEN 'into_not_found'
    WHEN pred.session_id <> s.id THEN 'into_other_session'
    WHEN pred.deleted_at IS NOT NULL THEN 'into_deleted'
    WHEN pred.role = 'summary' THEN 'into_summary'
    WHEN $checkout AND head <> f THEN 'head_changed'
    WHEN size(carried) = 0 THEN 'nothing_to_carry'
    WHEN any(e IN carried WHERE NOT e.ok) THEN 'carried_invalid'
    WHEN carried[-1].node <> f
      OR any(i IN range(1, size(carried) - 1) WHERE carried[i].pred <> carried[i - 1].node)
      OR EXISTS { (pred)-[:PREDECESSOR*0..]->(x:Node) WHERE x = carried[0].node }
      OR NOT EXISTS { (pred)-[:PREDECESSOR*0..]->(x:Node) WHERE x = carried[0].pred }
      THEN 'carried_not_segment'
    WHEN size(invalid_reads) > 0 THEN 'read_invalid'
    WHEN size(unanswered) > 0 THEN 'tool_uses_open'
  END AS problem
// include: node_write
FOREACH (x IN CASE WHEN problem IS NULL THEN [n] ELSE [] END |
  SET x.carried_from_id = $from_id, x.carried_count = size(carried),
    x.instructions = $instructions
  FOREACH (i IN range(0, size(carried) - 1) |
    FOREACH (c IN [carried[i].node] | CREATE (x)-[:CARRIES_OVER {order: i}]->(c))))
WITH *, CASE WHEN problem IS NULL THEN
    [{type: 'node_appended', node_id: n.id, role: n.role, predecessor_id: pred.id}]
    + CASE WHEN head_moved THEN [{type: 'head_moved', previous_head_id: head.id, head_id: n.id}]
      ELSE [] END
    + [{type: 'branch_carried', node_id: n.id, from_id: f.id, into_id: pred.id,
        carried_count: size(carried)}]
  ELSE [] END AS announced
// include: events_write
RETURN problem, invalid_reads, unanswered, $answers AS answers, events, s.id AS session_id,
  head_moved, head.id AS previous_head_id, coalesce(s.summary_version, 0) AS summary_version,
  // include: node_map
  AS node
