// fragment check_session_invariants: one row {violation} per broken storage invariant of
// session `s`, none when it is sound. A UNION body: include it inside `CALL (s) { ... }`.
// Depth rises by exactly one along every PREDECESSOR edge and only ROOT has depth 0,
// so a consistent depth proves the chains are acyclic and all end at ROOT.
// The events' numbering is checked apart (check_session_events): a write that stores
// events must not read them (events_write), and may include this fragment.
// Every match of the session's nodes, calls or tool uses names the session index it starts
// from (USING INDEX): planned on a young store, one holding few edges of some type, Neo4j
// started from a scan of every such edge in the store instead
// (tests/integration/test_session_scoped_plans.py).
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
USING INDEX n:Node(session_id)
WHERE n.depth = 0 AND (NOT EXISTS { (s)-[:ROOT]->(n) } OR EXISTS { (n)-[:PREDECESSOR]->() })
RETURN 'ROOT: ' + n.id + ' has depth 0 but is not the ROOT, or has a predecessor' AS violation
UNION ALL
MATCH (n:Node {session_id: s.id})
USING INDEX n:Node(session_id)
WHERE n.depth > 0 AND COUNT { (n)-[:PREDECESSOR]->() } <> 1
RETURN 'PREDECESSOR: ' + n.id + ' has ' + toString(COUNT { (n)-[:PREDECESSOR]->() }) + ' predecessors' AS violation
UNION ALL
MATCH (n:Node {session_id: s.id})-[:PREDECESSOR]->(p:Node)
USING INDEX n:Node(session_id)
WHERE p.session_id <> n.session_id OR p.depth <> n.depth - 1
RETURN 'PREDECESSOR: ' + n.id + ' -> ' + p.id + ' crosses sessions or breaks the depth order (a cycle)' AS violation
UNION ALL
MATCH (n:Node {session_id: s.id})-[:CALLER]->(c:Node)
USING INDEX n:Node(session_id)
WHERE c.session_id <> n.session_id
RETURN 'CALLER: ' + n.id + ' -> ' + c.id + ' crosses sessions' AS violation
UNION ALL
MATCH (n:Node {session_id: s.id})
USING INDEX n:Node(session_id)
WITH s, n.seq AS seq, count(*) AS uses
WHERE uses > 1
RETURN 'seq: ' + toString(seq) + ' is used by ' + toString(uses) + ' nodes' AS violation
UNION ALL
WITH s, COUNT { (n:Node {session_id: s.id}) } AS stored
WHERE stored <> s.next_seq
RETURN 'nodes: ' + toString(stored) + ' stored but ' + toString(s.next_seq) + ' were written' AS violation
UNION ALL
MATCH (n:Node {session_id: s.id})-[:PREDECESSOR]->(p:Node)
USING INDEX n:Node(session_id)
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
// A branch deletion that takes the active summary takes the pointer too.
MATCH (s)-[:ACTIVE_SUMMARY]->(a:Node)
WHERE a.deleted_at IS NOT NULL
RETURN 'summary: active ' + a.id + ' is deleted' AS violation
UNION ALL
MATCH (x:Node {session_id: s.id, role: 'summary'})
USING INDEX x:Node(session_id, role)
WHERE NOT x.superseded_summary AND NOT EXISTS { (s)-[:ACTIVE_SUMMARY]->(x) }
RETURN 'summary: ' + x.id + ' is neither active nor superseded' AS violation
UNION ALL
MATCH (x:Node {session_id: s.id, role: 'summary'})<-[:PREDECESSOR]-(y:Node)
USING INDEX x:Node(session_id, role)
RETURN 'summary: ' + y.id + ' was appended after summary ' + x.id AS violation
UNION ALL
MATCH (x:Node {session_id: s.id, role: 'summary'})
USING INDEX x:Node(session_id, role)
WHERE x.retired_at IS NOT NULL
  AND (NOT coalesce(x.superseded_summary, false) OR EXISTS { (s)-[:ACTIVE_SUMMARY]->(x) })
RETURN 'summary: ' + x.id + ' is retired but still active or not superseded' AS violation
UNION ALL
// ABSORBED and REPLACED edges stand for the absorbed_id and replaced_id properties: one
// edge to the node the property names, none without it.
MATCH (x:Node {session_id: s.id})
USING INDEX x:Node(session_id)
UNWIND [
  {kind: 'ABSORBED', key: 'absorbed_id', named: x.absorbed_id,
   edges: COUNT { (x)-[:ABSORBED]->() },
   to_named: COUNT { (x)-[:ABSORBED]->(a:Node) WHERE a.id = x.absorbed_id }},
  {kind: 'REPLACED', key: 'replaced_id', named: x.replaced_id,
   edges: COUNT { (x)-[:REPLACED]->() },
   to_named: COUNT { (x)-[:REPLACED]->(a:Node) WHERE a.id = x.replaced_id }}
] AS e
WITH x, e
WHERE (e.named IS NOT NULL OR e.edges > 0) AND (e.named IS NULL OR e.edges <> 1 OR e.to_named <> 1)
RETURN e.kind + ': ' + x.id + ' has ' + toString(e.edges) + ' ' + e.kind + ' relationships for '
  + e.key + ' ' + CASE WHEN e.named IS NULL THEN 'none' WHEN e.named IS :: STRING THEN e.named
                       ELSE 'that is not an id' END + ', not one to that node' AS violation
UNION ALL
// An absorbed summary is an earlier one of the same session spliced at the same point (its
// segment is the start of the absorbing one's); a replaced one, an earlier one of the session.
MATCH (x:Node {session_id: s.id})-[r:ABSORBED|REPLACED]->(a)
USING INDEX x:Node(session_id)
WHERE a.id = CASE type(r) WHEN 'ABSORBED' THEN x.absorbed_id ELSE x.replaced_id END
  AND NOT coalesce(
    x.role = 'summary' AND a:Node AND a.role = 'summary' AND a.session_id = x.session_id
    AND a.seq < x.seq
    AND (type(r) = 'REPLACED'
         OR [(x)-[:PREDECESSOR]->(p:Node) | p.id] = [(a)-[:PREDECESSOR]->(p:Node) | p.id]), false)
RETURN type(r) + ': ' + x.id + CASE type(r) WHEN 'ABSORBED' THEN ' absorbs ' ELSE ' replaced ' END
  + a.id + ', which is not an earlier summary of this session'
  + CASE type(r) WHEN 'ABSORBED' THEN ' spliced at the same point' ELSE '' END AS violation
UNION ALL
// A summary's COVERS edges name the turns it newly covered: they continue the segment of
// the summary it absorbed, or start right after its splice point when it absorbed none.
MATCH (x:Node {session_id: s.id, role: 'summary'})-[:PREDECESSOR]->(splice:Node)
USING INDEX x:Node(session_id, role)
OPTIONAL MATCH (absorbed:Node {id: x.absorbed_id})
WITH x, splice, absorbed, COLLECT {
  MATCH (x)-[c:COVERS]->(t:Node)
  RETURN {order: c.order, id: t.id, real: t.role <> 'summary' AND t.session_id = x.session_id,
          pred: [(t)-[:PREDECESSOR]->(p:Node) | p.id][0]} AS e
  ORDER BY c.order
} AS covered
WHERE x.absorbed_id IS NULL OR absorbed.session_id = x.session_id
WITH x, absorbed, covered,
  CASE WHEN absorbed IS NULL THEN splice.id ELSE absorbed.covers_last_id END AS after
WITH x, absorbed, covered, after,
  size(covered) > 0 AND [e IN covered | e.order] = range(0, size(covered) - 1)
    AND size(covered) = x.covers_new_count AS counted
WHERE NOT coalesce(counted, false) OR NOT coalesce(
  all(e IN covered WHERE e.real)
  AND covered[0].pred = after
  AND all(i IN range(1, size(covered) - 1) WHERE covered[i].pred = covered[i - 1].id)
  AND covered[-1].id = x.covers_last_id
  AND x.covers_count = x.covers_new_count + coalesce(absorbed.covers_count, 0)
  AND x.covers_first_id = coalesce(absorbed.covers_first_id, covered[0].id), false)
RETURN CASE WHEN NOT coalesce(counted, false)
  THEN 'COVERS: summary ' + x.id + ' has ' + toString(size(covered))
    + ' COVERS edges for a covers_new_count of ' + coalesce(toString(x.covers_new_count), 'none')
    + ', or their orders are not 0..n-1'
  ELSE 'COVERS: summary ' + x.id + ' does not cover a contiguous chain segment of real turns '
    + CASE WHEN absorbed IS NULL THEN 'starting right after its splice point'
      ELSE 'continuing the segment of summary ' + absorbed.id + ' it absorbed' END
    + ', or its covers_count, covers_first_id or covers_last_id do not describe it'
  END AS violation
UNION ALL
// A summary's one ENDS_AT edge names its segment's last turn (the segmented walk's step).
MATCH (x:Node {session_id: s.id, role: 'summary'})
USING INDEX x:Node(session_id, role)
WITH x, [(x)-[:ENDS_AT]->(e) | e] AS ends
WHERE size(ends) <> 1 OR ends[0].id <> x.covers_last_id
RETURN 'ENDS_AT: ' + x.id + ' has ' + toString(size(ends)) + ' ENDS_AT relationships for '
  + 'covers_last_id ' + x.covers_last_id + ', not one to that node' AS violation
UNION ALL
// A nested summary (segmented) merged earlier summaries of its session whose segments, in
// order, make up its own.
MATCH (x:Node {session_id: s.id, role: 'summary'})
USING INDEX x:Node(session_id, role)
WHERE x.nested_ids IS NOT NULL
WITH x, [nid IN x.nested_ids | COLLECT {
  MATCH (n:Node {id: nid})
  WHERE n.session_id = x.session_id AND n.role = 'summary' AND n.seq < x.seq
  RETURN n
}[0]] AS nested
WHERE size(nested) < 2 OR any(n IN nested WHERE n IS NULL)
  OR nested[0].covers_first_id <> x.covers_first_id
  OR nested[-1].covers_last_id <> x.covers_last_id
  OR reduce(total = 0, n IN nested | total + n.covers_count) <> x.covers_count
RETURN 'summary: nested ' + x.id + "'s nested_ids are not earlier summaries of this session "
  + 'whose segments make up its own' AS violation
UNION ALL
// retained_ids (absent on summaries written before they were recorded): the compacted
// head's chain strictly below covers_last_id, down to compacted_head_id.
// (A value that is not a list of strings is a property problem, named by records.py.)
MATCH (x:Node {session_id: s.id, role: 'summary'})
USING INDEX x:Node(session_id, role)
WHERE x.retained_ids IS :: LIST<STRING NOT NULL> NOT NULL
WITH x, [rid IN x.retained_ids | COLLECT {
  MATCH (n:Node {id: rid})-[:PREDECESSOR]->(p:Node)
  WHERE n.session_id = x.session_id AND n.role <> 'summary'
  RETURN p.id AS pred
}] AS preds
WHERE NOT coalesce(
  all(i IN range(0, size(x.retained_ids) - 1)
      WHERE preds[i] = [CASE WHEN i = 0 THEN x.covers_last_id ELSE x.retained_ids[i - 1] END])
  AND x.compacted_head_id = coalesce(x.retained_ids[-1], x.covers_last_id), false)
RETURN 'summary: ' + x.id + ' has retained_ids that are not the chain right below its '
  + 'covers_last_id down to its compacted_head_id' AS violation
UNION ALL
MATCH (c:Call {session_id: s.id})-[:READ]->(x)
USING INDEX c:Call(session_id)
WHERE NOT x:Node OR coalesce(x.session_id, '') <> s.id
RETURN 'READ: call ' + c.id + ' reads ' + coalesce(x.id, 'something')
  + ', which is not a node of this session' AS violation
UNION ALL
MATCH (c:Call {session_id: s.id})
USING INDEX c:Call(session_id)
WITH c, COUNT { (c)-[:READ]->() } AS edges,
  COLLECT { MATCH (c)-[r:READ]->() RETURN r.position AS position ORDER BY position } AS positions
WHERE NOT coalesce(positions = range(0, edges - 1) AND edges = c.read_count, false)
RETURN 'READ: call ' + c.id + ' has ' + toString(edges) + ' READ edges for a read_count of '
  + coalesce(toString(c.read_count), 'none') + ', or their positions are not 0..n-1' AS violation
UNION ALL
MATCH (c:Call {session_id: s.id})
USING INDEX c:Call(session_id)
WITH c, COUNT { (c)-[:READ]->() } AS edges, COUNT { MATCH (c)-[:READ]->(x) RETURN DISTINCT x } AS read
WHERE edges > read
RETURN 'READ: call ' + c.id + ' reads ' + toString(edges - read) + ' nodes more than once' AS violation
UNION ALL
// Tool pairs (docs/concepts/content-blocks.md). A node's USES edges are its
// tool_use_ids in order, each to a ToolUse of this session and tenant; each ToolUse is the
// tool use of one message. (A value that is not a list of ids is a property problem, named
// by records.py; here it counts as none.) A tombstoned node may hold none: one a grown
// transcript replaced gave its tool uses to the message that replaced it.
MATCH (n:Node {session_id: s.id})
USING INDEX n:Node(session_id)
WHERE n.tool_use_ids IS NOT NULL OR EXISTS { (n)-[:USES]->() }
WITH n, CASE WHEN n.tool_use_ids IS :: LIST<STRING NOT NULL> NOT NULL THEN n.tool_use_ids ELSE [] END AS named,
  // Expanded from n: t's label is read, not matched, or a planner that took the session's
  // tool uses for few sought them all for each n (quadratic in a session's tool uses).
  COLLECT { MATCH (n)-[u:USES]->(t)
            WHERE 'ToolUse' IN labels(t) AND t.session_id = n.session_id
              AND t.tenant = n.tenant AND t.id IS :: STRING
            RETURN t.id AS id ORDER BY u.order } AS uses,
  COUNT { (n)-[:USES]->() } AS edges
WHERE (uses <> named OR edges <> size(uses)) AND NOT (n.deleted_at IS NOT NULL AND edges = 0)
RETURN 'USES: ' + n.id + ' has USES edges to ('
  + reduce(ids = '', i IN uses | ids + CASE WHEN ids = '' THEN '' ELSE ', ' END + i) + ')'
  + CASE WHEN edges > size(uses) THEN ', and ' + toString(edges - size(uses))
      + ' to tool uses of another session' ELSE '' END
  + ' for its tool_use_ids ('
  + reduce(ids = '', i IN named | ids + CASE WHEN ids = '' THEN '' ELSE ', ' END + i) + ')' AS violation
UNION ALL
MATCH (u:ToolUse {session_id: s.id})
USING INDEX u:ToolUse(session_id)
// (m's label read, not matched, as above: expanded from u.)
WITH u, COUNT { (m)-[:USES]->(u) WHERE 'Node' IN labels(m) AND m.session_id = s.id } AS users
WHERE users <> 1 OR coalesce(u.tenant <> s.tenant, true)
RETURN 'USES: tool use ' + coalesce(toString(u.id), 'without an id') + ' is used by '
  + toString(users) + ' messages of this session'
  + CASE WHEN coalesce(u.tenant <> s.tenant, true) THEN ' and stored under another tenant'
      ELSE '' END AS violation
UNION ALL
MATCH (u:ToolUse {session_id: s.id})
USING INDEX u:ToolUse(session_id)
WITH u.id AS id, count(*) AS uses WHERE uses > 1
RETURN 'USES: tool use id ' + toString(id) + ' names ' + toString(uses) + ' tool uses' AS violation
UNION ALL
// A node's ANSWERS edges are its answered_ids, each to a tool use of its predecessor (a
// tombstoned node's predecessor may have given its tool uses away: see USES).
MATCH (n:Node {session_id: s.id})
USING INDEX n:Node(session_id)
WHERE (n.answered_ids IS NOT NULL OR EXISTS { (n)-[:ANSWERS]->() })
  AND NOT (n.deleted_at IS NOT NULL AND NOT EXISTS { (n)-[:ANSWERS]->() })
WITH n, CASE WHEN n.answered_ids IS :: LIST<STRING NOT NULL> NOT NULL THEN n.answered_ids ELSE [] END AS named,
  COLLECT { MATCH (n)-[:PREDECESSOR]->(:Node)-[:USES]->(t:ToolUse)<-[:ANSWERS]-(n)
            WHERE t.id IS :: STRING
            RETURN t.id AS id ORDER BY id } AS reached,
  COUNT { (n)-[:ANSWERS]->() } AS edges
WHERE size(reached) <> size(named) OR edges <> size(reached) OR any(i IN named WHERE NOT i IN reached)
RETURN 'ANSWERS: ' + n.id + ' answers ('
  + reduce(ids = '', i IN named | ids + CASE WHEN ids = '' THEN '' ELSE ', ' END + i)
  + ') but its ANSWERS edges reach ('
  + reduce(ids = '', i IN reached | ids + CASE WHEN ids = '' THEN '' ELSE ', ' END + i)
  + ') among the tool uses of its predecessor'
  + CASE WHEN edges > size(reached) THEN ', and ' + toString(edges - size(reached))
      + ' other tool uses' ELSE '' END AS violation
UNION ALL
// Every live turn after a message with tool uses is the one message answering all of them.
MATCH (n:Node {session_id: s.id})<-[:PREDECESSOR]-(c:Node)
USING INDEX n:Node(session_id)
WHERE n.tool_use_ids IS :: LIST<STRING NOT NULL> NOT NULL AND size(n.tool_use_ids) > 0
  AND c.deleted_at IS NULL AND c.role <> 'summary'
  AND NOT coalesce(c.role = 'tool' AND c.answered_ids IS :: LIST<STRING NOT NULL> NOT NULL
                   AND size(c.answered_ids) = size(n.tool_use_ids)
                   AND all(i IN n.tool_use_ids WHERE i IN c.answered_ids), false)
RETURN 'tool pair: ' + c.id + ' (' + toString(c.role) + ') follows ' + n.id + ', whose tool uses ('
  + reduce(ids = '', i IN n.tool_use_ids | ids + CASE WHEN ids = '' THEN '' ELSE ', ' END + i)
  + ') only a tool message answering every one of them may follow' AS violation
UNION ALL
// A branch name names a live user-branch tip of the session (branch_name_set, node_write).
MATCH (s)-[:NAMES]->(t:Node)
WHERE t.session_id <> s.id OR t.deleted_at IS NOT NULL OR t.role = 'summary' OR t.side_branch
  OR EXISTS {
    (t)<-[:PREDECESSOR]-(c:Node)
    WHERE c.deleted_at IS NULL AND c.role <> 'summary' AND NOT c.side_branch
  }
RETURN 'branch name: ' + t.id + ' is named but is not a live branch tip of this session (a name follows its branch to the tip)' AS violation
UNION ALL
// A call's OFFERED edge is its tools_sha256: one edge to the tenant's ToolSet of that hash.
MATCH (c:Call {session_id: s.id})
USING INDEX c:Call(session_id)
WITH c, COLLECT { MATCH (c)-[:OFFERED]->(t:ToolSet) WHERE t.tenant = c.tenant
                  RETURN t.sha256 AS sha256 } AS offered, COUNT { (c)-[:OFFERED]->() } AS edges
WHERE edges <> size(offered)
   OR offered <> CASE WHEN c.tools_sha256 IS NULL THEN [] ELSE [c.tools_sha256] END
RETURN 'tools: call ' + c.id + ' has OFFERED edges that are not its tools_sha256' AS violation
UNION ALL
// A carry node (docs/concepts/annotations.md) stands for the turns of a branch that are not on
// its own chain: CARRIES_OVER edges, orders 0..carried_count-1, to a chain segment of real
// turns of its session ending at carried_from_id and opening right below a node of its own
// chain (the common ancestor). No other node has CARRIES_OVER edges.
MATCH (x:Node {session_id: s.id})
USING INDEX x:Node(session_id)
WHERE x.role = 'carry' OR EXISTS { (x)-[:CARRIES_OVER]->() }
WITH x, [(x)-[:PREDECESSOR]->(p:Node) | p][0] AS into, COLLECT {
  MATCH (x)-[c:CARRIES_OVER]->(t)
  RETURN {order: c.order, id: t.id,
          real: t:Node AND t.role <> 'summary' AND t.session_id = x.session_id,
          pred: [(t)-[:PREDECESSOR]->(p:Node) | p.id][0]} AS e
  ORDER BY c.order
} AS carried
WHERE x.role <> 'carry' OR size(carried) = 0 OR NOT coalesce(
  size(carried) = x.carried_count
  AND [e IN carried | e.order] = range(0, size(carried) - 1)
  AND all(e IN carried WHERE e.real)
  AND all(i IN range(1, size(carried) - 1) WHERE carried[i].pred = carried[i - 1].id)
  AND carried[-1].id = x.carried_from_id
  AND NOT EXISTS { (into)-[:PREDECESSOR*0..]->(y:Node) WHERE y.id = carried[0].id }
  AND EXISTS { (into)-[:PREDECESSOR*0..]->(y:Node) WHERE y.id = carried[0].pred }, false)
RETURN 'CARRIES_OVER: ' + x.id + CASE WHEN x.role <> 'carry' THEN ' is no carry node'
  ELSE ' does not stand for the chain of ' + coalesce(toString(x.carried_from_id), 'its source')
    + ' below its common ancestor with its own chain (' + toString(size(carried))
    + ' edges for a carried_count of ' + coalesce(toString(x.carried_count), 'none') + ')' END
  AS violation
UNION ALL
// A reply kept out of every render takes the tool message answering it along (a render never
// holds a result without its tool use), and only such a message is out of the context with it.
MATCH (n:Node {session_id: s.id})<-[:PREDECESSOR]-(c:Node {role: 'tool'})
USING INDEX n:Node(session_id)
WHERE coalesce(n.out_of_context, false) <> coalesce(c.out_of_context, false)
RETURN 'out of the context: tool message ' + c.id
  + CASE WHEN c.out_of_context THEN ' is' ELSE ' is not' END + ' out of the context but '
  + n.id + ', whose tool uses it answers,' + CASE WHEN c.out_of_context THEN ' is not' ELSE ' is' END
  AS violation
