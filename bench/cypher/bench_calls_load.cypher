// name: bench_calls_load
// returns: one row {calls, reads}
// purpose: bench-only bulk loader: Call nodes with READ {position} edges, with the properties the call_write fragment gives a call that produced no node
// params: session_id, tenant, calls
MATCH (s:Session {id: $session_id, tenant: $tenant})
UNWIND $calls AS call
CREATE (c:Call {
  id: call.id, session_id: s.id, tenant: s.tenant, purpose: call.purpose,
  provider: call.provider, model: call.model, head_id: call.head_id,
  started_at: call.started_at, finished_at: call.finished_at,
  input_tokens: call.input_tokens, output_tokens: call.output_tokens,
  error_code: call.error_code, error_message: call.error_message,
  read_count: size(call.read_ids)
})
WITH c, call
CALL (c, call) {
  UNWIND range(0, size(call.read_ids) - 1) AS position
  MATCH (r:Node {id: call.read_ids[position], tenant: $tenant})
  CREATE (c)-[:READ {position: position}]->(r)
  RETURN count(*) AS reads
}
RETURN count(c) AS calls, sum(reads) AS reads
