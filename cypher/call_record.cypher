// name: call_record
// returns: one row {problem, invalid_reads, accounting}; accounting: what the statement worked out about the call (its prompt's tokens and its shared prefix), null when problem is set
// purpose: records a model call that produced no node (a failed call, an external call without output) with its READ edges
// params: session_id, tenant, call, now
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_write_lock
WITH s
// include: call_reads_check
WITH s, call_reads, invalid_reads,
  CASE WHEN size(invalid_reads) > 0 THEN 'read_invalid' END AS problem
OPTIONAL CALL (s, problem, call_reads) {
  WITH * WHERE problem IS NULL
  WITH s, null AS produced, call_reads
  // include: call_write
  MATCH (c:Call {id: $call.id, tenant: s.tenant})
  RETURN c {.previous_call_id, .shared_prefix_reads, .shared_prefix_tokens,
            .prompt_tokens} AS accounting
}
RETURN problem, invalid_reads, accounting
