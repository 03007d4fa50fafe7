// name: append_message
// returns: one row {problem, head_moved, previous_head_id, node}; node is null when problem is set
// purpose: the one statement that adds a turn to a chain — after a predecessor (default: HEAD) or as a fork of a node — applying the writer's HEAD policy and recording the model call that produced it
// params: session_id, tenant, node_id, role, content, tokens, metadata, now, predecessor_id, caller_id, side_branch, head_policy, fork_of, call
// HEAD policy: 'advance' moves HEAD onto the new node only when its predecessor is HEAD (the
// conversation grew); 'move' always does (retry/edit, explicit user moves); 'keep' never does.
// The SET on the session takes its write lock first, so HEAD is read after any concurrent
// append has committed: of two appends on the same HEAD exactly one advances it.
OPTIONAL MATCH (fork:Node {id: $fork_of, tenant: $tenant})
MATCH (s:Session {id: coalesce($session_id, fork.session_id), tenant: $tenant})
SET s.next_seq = s.next_seq + 1, s.updated_at = $now
WITH s, fork, s.next_seq - 1 AS seq
MATCH (s)-[:HEAD]->(head:Node)
OPTIONAL MATCH (fork)-[:PREDECESSOR]->(fork_pred:Node)
OPTIONAL MATCH (named:Node {id: coalesce($predecessor_id, head.id), tenant: $tenant})
WITH s, seq, head, fork, CASE WHEN $fork_of IS NULL THEN named ELSE fork_pred END AS pred
OPTIONAL MATCH (caller:Node {id: $caller_id, tenant: $tenant})
// include: call_reads_check
WITH s, seq, head, fork, pred, caller, invalid_reads,
  CASE
    WHEN $fork_of IS NOT NULL AND fork IS NULL THEN 'fork_not_found'
    WHEN $fork_of IS NOT NULL AND fork.session_id <> s.id THEN 'fork_other_session'
    WHEN $fork_of IS NOT NULL AND fork.deleted_at IS NOT NULL THEN 'fork_deleted'
    WHEN $fork_of IS NOT NULL AND pred IS NULL THEN 'fork_is_root'
    WHEN $fork_of IS NOT NULL AND fork.role <> $role AND $role = 'assistant' THEN 'wrong_role_retry'
    WHEN $fork_of IS NOT NULL AND fork.role <> $role THEN 'wrong_role_edit'
    WHEN pred IS NULL THEN 'predecessor_not_found'
    WHEN pred.session_id <> s.id THEN 'predecessor_other_session'
    WHEN pred.deleted_at IS NOT NULL THEN 'predecessor_deleted'
    WHEN pred.role = 'summary' THEN 'predecessor_summary'
    WHEN $caller_id IS NOT NULL AND caller IS NULL THEN 'caller_not_found'
    WHEN caller.session_id <> s.id THEN 'caller_other_session'
    WHEN caller.deleted_at IS NOT NULL THEN 'caller_deleted'
    WHEN size(invalid_reads) > 0 THEN 'read_invalid'
  END AS problem
OPTIONAL CALL (s, seq, head, fork, pred, caller, problem) {
  WITH * WHERE problem IS NULL
  CREATE (n:Node {
    id: $node_id, session_id: s.id, tenant: s.tenant, role: $role, content: $content,
    created_at: $now, tokens: $tokens, metadata: $metadata, seq: seq,
    depth: pred.depth + 1, side_branch: $side_branch OR pred.side_branch, fork_of: fork.id
  })
  CREATE (n)-[:PREDECESSOR]->(pred)
  FOREACH (c IN CASE WHEN caller IS NULL THEN [] ELSE [caller] END | CREATE (n)-[:CALLER]->(c))
  WITH s, head, pred, n
  OPTIONAL CALL (s, head, pred, n) {
    WITH * WHERE $head_policy = 'move' OR ($head_policy = 'advance' AND pred = head)
    MATCH (s)-[h:HEAD]->(:Node)
    DELETE h
    CREATE (s)-[:HEAD]->(n)
    RETURN true AS moved
  }
  WITH s, n, coalesce(moved, false) AS head_moved, n AS produced
  // include: call_write
  RETURN n, head_moved
}
RETURN problem, invalid_reads, head_moved, head.id AS previous_head_id,
  CASE WHEN n IS NULL THEN null ELSE n {.*, predecessor_id: pred.id, caller_id: caller.id} END AS node
