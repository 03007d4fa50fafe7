// name: bench_chain_finish
// returns: one row {next_seq, head_id}
// purpose: bench-only: after bulk loading, HEAD on the last loaded node and next_seq counting every node, as the one-by-one appends would have left them
// params: session_id, tenant, head_id, next_seq, now
MATCH (s:Session {id: $session_id, tenant: $tenant})-[h:HEAD]->(:Node)
MATCH (n:Node {id: $head_id, tenant: $tenant})
DELETE h
CREATE (s)-[:HEAD]->(n)
SET s.next_seq = $next_seq, s.updated_at = $now
RETURN s.next_seq AS next_seq, n.id AS head_id
