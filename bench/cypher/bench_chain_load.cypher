// name: bench_chain_load
// returns: one row {created, last_id}
// purpose: bench-only bulk loader: a batch of turns chained after $pred_id, each node and PREDECESSOR edge exactly as append_message writes them one by one (HEAD and next_seq are set once by bench_chain_finish)
// params: session_id, tenant, pred_id, rows
// Each row: {id, role, content, created_at, tokens, metadata, seq, depth}; seq and depth are
// computed by the caller from the session's next_seq and the predecessor's depth, exactly as
// append_message computes them. side_branch is false (pred.side_branch is false on a user
// branch) and fork_of is null (not stored), as for an append at HEAD.
MATCH (s:Session {id: $session_id, tenant: $tenant})
MATCH (start:Node {id: $pred_id, tenant: $tenant})
UNWIND $rows AS r
CREATE (n:Node {
  id: r.id, session_id: s.id, tenant: s.tenant, role: r.role, content: r.content,
  created_at: r.created_at, tokens: r.tokens, metadata: r.metadata, seq: r.seq,
  depth: r.depth, side_branch: false
})
WITH start, collect(n) AS ns
UNWIND range(0, size(ns) - 1) AS i
WITH ns, ns[i] AS n, CASE WHEN i = 0 THEN start ELSE ns[i - 1] END AS p
CREATE (n)-[:PREDECESSOR]->(p)
WITH ns, count(*) AS created
RETURN created, ns[-1].id AS last_id
