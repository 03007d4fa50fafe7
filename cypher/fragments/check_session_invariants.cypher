// fragment check_session_invariants: one row {violation} per broken storage invariant of
// session `s`, none when it is sound. A UNION body: include it inside `CALL (s) { ... }`.
// Depth rises by exactly one along every PREDECESSOR edge and only ROOT has depth 0,
// so a consistent depth proves the chains are acyclic and all end at ROOT.
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
UNION ALL
WITH s WHERE COUNT { (s)-[:ACTIVE_SUMMARY]->() } > 1
RETURN 'summary: the session has more than one active summary' AS violation
UNION ALL
MATCH (s)-[:ACTIVE_SUMMARY]->(a:Node)
WHERE a.role <> 'summary' OR a.superseded_summary OR a.session_id <> s.id
RETURN 'summary: active ' + a.id + ' is not a current summary of this session' AS violation
UNION ALL
MATCH (x:Node {session_id: s.id, role: 'summary'})
WHERE NOT x.superseded_summary AND NOT EXISTS { (s)-[:ACTIVE_SUMMARY]->(x) }
RETURN 'summary: ' + x.id + ' is neither active nor superseded' AS violation
UNION ALL
MATCH (x:Node {session_id: s.id, role: 'summary'})<-[:PREDECESSOR]-(y:Node)
RETURN 'summary: ' + y.id + ' was appended after summary ' + x.id AS violation
UNION ALL
MATCH (x:Node {session_id: s.id, role: 'summary'})-[:PREDECESSOR]->(splice:Node)
WITH x, splice, COLLECT {
  MATCH (x)-[c:COVERS]->(t:Node)
  RETURN {order: c.order, id: t.id, real: t.role <> 'summary' AND t.session_id = x.session_id,
          pred: [(t)-[:PREDECESSOR]->(p:Node) | p.id][0]} AS e
  ORDER BY c.order
} AS covered
WHERE size(covered) = 0
   OR [e IN covered | e.order] <> range(0, size(covered) - 1)
   OR size(covered) <> x.covers_count
   OR covered[0].id <> x.covers_first_id OR covered[-1].id <> x.covers_last_id
   OR any(e IN covered WHERE NOT e.real)
   OR covered[0].pred <> splice.id
   OR any(i IN range(1, size(covered) - 1) WHERE covered[i].pred <> covered[i - 1].id)
RETURN 'COVERS: summary ' + x.id + ' does not cover a contiguous chain segment of real turns '
  + 'starting right after its splice point' AS violation
UNION ALL
MATCH (c:Call {session_id: s.id})-[:READ]->(x)
WHERE NOT x:Node OR coalesce(x.session_id, '') <> s.id
RETURN 'READ: call ' + c.id + ' reads ' + coalesce(x.id, 'something')
  + ', which is not a node of this session' AS violation
UNION ALL
MATCH (c:Call {session_id: s.id})
WITH c, COUNT { (c)-[:READ]->() } AS edges,
  COLLECT { MATCH (c)-[r:READ]->() RETURN r.position AS position ORDER BY position } AS positions
WHERE NOT coalesce(positions = range(0, edges - 1) AND edges = c.read_count, false)
RETURN 'READ: call ' + c.id + ' has ' + toString(edges) + ' READ edges for a read_count of '
  + coalesce(toString(c.read_count), 'none') + ', or their positions are not 0..n-1' AS violation
UNION ALL
MATCH (c:Call {session_id: s.id})
WITH c, COUNT { (c)-[:READ]->() } AS edges, COUNT { MATCH (c)-[:READ]->(x) RETURN DISTINCT x } AS read
WHERE edges > read
RETURN 'READ: call ' + c.id + ' reads ' + toString(edges - read) + ' nodes more than once' AS violation
