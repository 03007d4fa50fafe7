// fragment call_reads_check: `call_reads`, the nodes $call.read_ids name in prompt order
// (null where an id is not a node of session s), and `invalid_reads`, those ids (both
// empty lists when there is no call). Each id is looked up once: call_write takes the
// nodes from `call_reads`. Expects `s` in scope.
// Each id is sought in the node id index, named: planned on a small store, a lookup left
// to the planner went through the session's nodes (node_session) for every id, work
// that grew with the session until Neo4j happened to replan.
CALL (s) {
  UNWIND range(0, size(coalesce($call.read_ids, [])) - 1) AS position
  OPTIONAL MATCH (r:Node {id: $call.read_ids[position], tenant: $tenant})
  USING INDEX r:Node(id)
  WITH position, CASE WHEN r.session_id = s.id THEN r END AS r
  ORDER BY position
  RETURN collect({node: r}) AS found
}
WITH *, [f IN found | f.node] AS call_reads
WITH *, [i IN range(0, size(call_reads) - 1) WHERE call_reads[i] IS NULL
         | $call.read_ids[i]] AS invalid_reads
