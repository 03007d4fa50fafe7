// fragment call_reads_check: `call_reads`, the nodes $call.read_ids name in prompt order
// (null where an id is not a node of session s), and `invalid_reads`, those ids (both
// empty lists when there is no call). Each id is looked up once: call_write takes the
// nodes from `call_reads`. Expects `s` in scope.
WITH *, CASE WHEN $call IS NULL THEN [] ELSE [read_id IN $call.read_ids | COLLECT {
  MATCH (r:Node {id: read_id, tenant: $tenant})
  WHERE r.session_id = s.id
  RETURN r
}[0]] END AS call_reads
WITH *, [i IN range(0, size(call_reads) - 1) WHERE call_reads[i] IS NULL
         | $call.read_ids[i]] AS invalid_reads
