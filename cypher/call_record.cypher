// name: call_record
// returns: one row {problem, invalid_reads}
// purpose: records a model call that produced no node (a failed call, an external call without output) with its READ edges
// params: session_id, tenant, call
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: call_reads_check
WITH s, call_reads, invalid_reads,
  CASE WHEN size(invalid_reads) > 0 THEN 'read_invalid' END AS problem
OPTIONAL CALL (s, problem, call_reads) {
  WITH * WHERE problem IS NULL
  WITH s, null AS produced, call_reads
  // include: call_write
  RETURN true AS written
}
RETURN problem, invalid_reads
