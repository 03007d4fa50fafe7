// name: bench_floor_reply
// returns: no rows
// purpose: bench-only (workload 8, the store's floor for a turn): the reply as bare Cypher, no checks, no events, no lock, no shared-prefix sums: its node, its Call, and a READ edge carrying its position to every node named (by element id, in prompt order)
// params: predecessor_id, tenant, node_id, call_id, content, tokens, seq, read_element_ids
MATCH (p:Node {id: $predecessor_id, tenant: $tenant})
CREATE (n:Node {id: $node_id, session_id: p.session_id, tenant: p.tenant, role: 'assistant',
  content: $content, tokens: $tokens, seq: $seq, depth: p.depth + 1, created_at: datetime(),
  metadata: '{"provider":"offline","model":"floor"}'})
CREATE (n)-[:PREDECESSOR]->(p)
CREATE (c:Call {id: $call_id, session_id: p.session_id, tenant: p.tenant, purpose: 'chat',
  provider: 'offline', model: 'floor', started_at: datetime(), finished_at: datetime(),
  read_count: size($read_element_ids)})
CREATE (c)-[:PRODUCED]->(n)
WITH c
CALL (c) {
  UNWIND range(0, size($read_element_ids) - 1) AS position
  MATCH (r:Node) WHERE elementId(r) = $read_element_ids[position]
  CREATE (c)-[:READ {position: position}]->(r)
}
