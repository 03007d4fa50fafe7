// fragment call_reads_check: the ids of $call.read_ids that are not nodes of session s
// (an empty list when there is no call). Expects `s` in scope.
WITH *, CASE WHEN $call IS NULL THEN [] ELSE [read_id IN $call.read_ids WHERE NOT EXISTS {
  MATCH (r:Node {id: read_id, tenant: $tenant})
  WHERE r.session_id = s.id
}] END AS invalid_reads
