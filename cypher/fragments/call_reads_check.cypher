// fragment call_reads_check: `call_reads`, the nodes $call.read_ids name in prompt order
// (null where an id is not a node of session s), and `invalid_reads`, those ids (both
// empty lists when there is no call). Each id is looked up once: call_write takes the
// nodes from `call_reads`. Expects `s` in scope.
// A call made from a render also names its reads by element id ($call.read_element_ids):
// those nodes are found directly, and must carry the id named. Any other id is sought in
// the node id index, named: planned on a small store, a lookup left to the planner went
// through the session's nodes (node_session) for every id.
CALL (s) {
  UNWIND range(0, size(coalesce($call.read_ids, [])) - 1) AS position
  WITH position, $call.read_ids[position] AS read_id
  OPTIONAL MATCH (known:Node) WHERE elementId(known) = $call.read_element_ids[position]
  WITH position, read_id, CASE WHEN known.id = read_id THEN known END AS known
  // Only an id not found by its element id is sought (a read of the service's own render
  // costs no index seek).
  WITH position, CASE WHEN known IS NOT NULL THEN known ELSE COLLECT {
      MATCH (sought:Node {id: read_id, tenant: $tenant})
      USING INDEX sought:Node(id)
      RETURN sought
    }[0] END AS r
  WITH position, CASE WHEN r.tenant = $tenant AND r.session_id = s.id THEN r END AS r
  ORDER BY position
  RETURN collect({node: r}) AS found
}
WITH *, [f IN found | f.node] AS call_reads
WITH *, [i IN range(0, size(call_reads) - 1) WHERE call_reads[i] IS NULL
         | $call.read_ids[i]] AS invalid_reads
