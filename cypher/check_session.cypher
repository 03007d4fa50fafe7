// name: check_session
// returns: one row {violation} per broken storage invariant of the session; none when it is sound
// purpose: the ledger's invariants, checked on stored data (tests run it after every scenario)
// params: session_id, tenant
// Depth rises by exactly one along every PREDECESSOR edge and only ROOT has depth 0,
// so a consistent depth proves the chains are acyclic and all end at ROOT.
MATCH (s:Session {id: $session_id, tenant: $tenant})
CALL (s) {
  WITH s WHERE COUNT { (s)-[:HEAD]->() } <> 1
  RETURN 'HEAD: the session has ' + toString(COUNT { (s)-[:HEAD]->() }) + ' HEAD relationships' AS violation
  UNION ALL
  MATCH (s)-[:HEAD]->(h)
  WHERE h.session_id <> s.id OR h.role = 'summary' OR h.deleted_at IS NOT NULL
  RETURN 'HEAD: ' + h.id + ' is not a live turn of this session' AS violation
  UNION ALL
  WITH s WHERE COUNT { (s)-[:ROOT]->() } <> 1
  RETURN 'ROOT: the session has ' + toString(COUNT { (s)-[:ROOT]->() }) + ' ROOT relationships' AS violation
  UNION ALL
  MATCH (n:Node {session_id: s.id})
  WHERE n.depth = 0 AND (NOT EXISTS { (s)-[:ROOT]->(n) } OR EXISTS { (n)-[:PREDECESSOR]->() })
  RETURN 'ROOT: ' + n.id + ' has depth 0 but is not the ROOT, or has a predecessor' AS violation
  UNION ALL
  MATCH (n:Node {session_id: s.id})
  WHERE n.depth > 0 AND COUNT { (n)-[:PREDECESSOR]->() } <> 1
  RETURN 'PREDECESSOR: ' + n.id + ' has ' + toString(COUNT { (n)-[:PREDECESSOR]->() }) + ' predecessors' AS violation
  UNION ALL
  MATCH (n:Node {session_id: s.id})-[:PREDECESSOR]->(p:Node)
  WHERE p.session_id <> n.session_id OR p.depth <> n.depth - 1
  RETURN 'PREDECESSOR: ' + n.id + ' -> ' + p.id + ' crosses sessions or breaks the depth order (a cycle)' AS violation
  UNION ALL
  MATCH (n:Node {session_id: s.id})-[:CALLER]->(c:Node)
  WHERE c.session_id <> n.session_id
  RETURN 'CALLER: ' + n.id + ' -> ' + c.id + ' crosses sessions' AS violation
  UNION ALL
  MATCH (n:Node {session_id: s.id})
  WITH s, n.seq AS seq, count(*) AS uses
  WHERE uses > 1
  RETURN 'seq: ' + toString(seq) + ' is used by ' + toString(uses) + ' nodes' AS violation
  UNION ALL
  WITH s, COUNT { (n:Node {session_id: s.id}) } AS stored
  WHERE stored <> s.next_seq
  RETURN 'nodes: ' + toString(stored) + ' stored but ' + toString(s.next_seq) + ' were written' AS violation
  UNION ALL
  MATCH (n:Node {session_id: s.id})-[:PREDECESSOR]->(p:Node)
  WHERE n.deleted_at IS NULL AND p.deleted_at IS NOT NULL
  RETURN 'deleted: live node ' + n.id + ' hangs under deleted ' + p.id AS violation
}
RETURN violation
