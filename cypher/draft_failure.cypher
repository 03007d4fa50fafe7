// name: draft_failure
// returns: one row {problem, invalid_reads, accounting, session_id}; accounting: what the statement worked out about the call (its prompt's tokens and its shared prefix), null when problem is set; no row when the draft does not exist (any more)
// purpose: completeTurn with a failed model call: the call alone (reading what the draft's request held, with its error), linked to the draft under $client_key; no node is written, HEAD is untouched and the draft stays open for another attempt
// params: tenant, call, now, draft_id, client_key, keep_until
MATCH (d:Draft {id: $draft_id, tenant: $tenant})
MATCH (s:Session {id: d.session_id, tenant: $tenant})
// include: session_write_lock
WITH s, d
// include: draft_state
// include: call_reads_check
WITH s, d, call_reads, invalid_reads, false AS completes,
  CASE
    WHEN key_used THEN 'draft_key_used'
    WHEN completed THEN 'draft_completed'
    WHEN d.expires_at <= $now THEN 'draft_expired'
    WHEN size(invalid_reads) > 0 THEN 'read_invalid'
  END AS problem
OPTIONAL CALL (s, problem, call_reads) {
  WITH * WHERE problem IS NULL
  WITH s, null AS produced, call_reads
  // include: call_write
  MATCH (c:Call {id: $call.id, tenant: s.tenant})
  RETURN c {.previous_call_id, .shared_prefix_reads, .shared_prefix_tokens,
            .prompt_tokens} AS accounting
}
// include: draft_attempt
RETURN problem, invalid_reads, accounting, s.id AS session_id
