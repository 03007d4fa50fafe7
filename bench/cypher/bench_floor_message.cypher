// name: bench_floor_message
// returns: no rows
// purpose: bench-only (workload 8, the store's floor for a turn): the user's node as bare Cypher, no checks, no events, no lock: a node with a real node's properties and its PREDECESSOR edge
// params: predecessor_id, tenant, node_id, content, tokens, seq
MATCH (p:Node {id: $predecessor_id, tenant: $tenant})
CREATE (n:Node {id: $node_id, session_id: p.session_id, tenant: p.tenant, role: 'user',
  content: $content, tokens: $tokens, seq: $seq, depth: p.depth + 1, created_at: datetime()})
CREATE (n)-[:PREDECESSOR]->(p)
