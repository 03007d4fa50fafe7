// fragment check_extension_invariants: one row {violation} per storage invariant of session
// `s` that the nodes of $nodes, just added after its stored ones, break; none when they
// break none. A UNION body, like check_session_invariants, of which it is the part new
// nodes can break, read from them (index lookups by id) so its cost follows what was
// added, not the session: their chain (a predecessor of this session, not deleted, one
// deeper), their tool pairs and the tool uses they answer, a new summary's coverage (a
// contiguous chain segment of this session), HEAD and the active summary. Whole-session
// checks stay with check_session_invariants (`ctxdag check`, a first import); what is
// left out holds of a stored session the extension cannot touch: it writes no calls, and
// its seqs and ids are numbered and refused before it writes (transcript_extend).
WITH s WHERE COUNT { (s)-[:HEAD]->() } <> 1
RETURN 'HEAD: the session has ' + toString(COUNT { (s)-[:HEAD]->() }) + ' HEAD relationships' AS violation
UNION ALL
MATCH (s)-[:HEAD]->(h)
WHERE h.session_id <> s.id OR h.role = 'summary' OR h.deleted_at IS NOT NULL
RETURN 'HEAD: ' + h.id + ' is not a live turn of this session' AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (n:Node {id: row.properties.id})
WHERE n.depth = 0 OR COUNT { (n)-[:PREDECESSOR]->() } <> 1
RETURN 'PREDECESSOR: ' + n.id + ' has ' + toString(COUNT { (n)-[:PREDECESSOR]->() })
  + ' predecessors at depth ' + toString(n.depth) + ' (its predecessor '
  + coalesce(row.predecessor_id, 'none') + ' is not a node of the session)' AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (n:Node {id: row.properties.id})-[:PREDECESSOR]->(p:Node)
WHERE p.session_id <> n.session_id OR p.depth <> n.depth - 1
RETURN 'PREDECESSOR: ' + n.id + ' -> ' + p.id + ' crosses sessions or breaks the depth order (a cycle)' AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (n:Node {id: row.properties.id})-[:CALLER]->(c:Node)
WHERE c.session_id <> n.session_id
RETURN 'CALLER: ' + n.id + ' -> ' + c.id + ' crosses sessions' AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (n:Node {id: row.properties.id})-[:PREDECESSOR]->(p:Node)
WHERE n.deleted_at IS NULL AND p.deleted_at IS NOT NULL
RETURN 'deleted: live node ' + n.id + ' hangs under deleted ' + p.id AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (n:Node {id: row.properties.id})-[:PREDECESSOR]->(x:Node {role: 'summary'})
RETURN 'summary: ' + n.id + ' was appended after summary ' + x.id AS violation
UNION ALL
WITH s WHERE COUNT { (s)-[:ACTIVE_SUMMARY]->() } > 1
RETURN 'summary: the session has more than one active summary' AS violation
UNION ALL
MATCH (s)-[:ACTIVE_SUMMARY]->(a:Node)
WHERE a.role <> 'summary' OR a.superseded_summary OR a.session_id <> s.id
  OR a.deleted_at IS NOT NULL
RETURN 'summary: active ' + a.id + ' is not a current, live summary of this session' AS violation
UNION ALL
// A new summary is active or superseded; so is the one it took the pointer from, which is
// one it names as replaced.
UNWIND $nodes AS row
MATCH (x:Node {id: row.properties.id, role: 'summary'})
OPTIONAL MATCH (x)-[:REPLACED]->(r:Node)
UNWIND [x, r] AS y
WITH s, y WHERE y IS NOT NULL
  AND NOT y.superseded_summary AND NOT EXISTS { (s)-[:ACTIVE_SUMMARY]->(y) }
RETURN 'summary: ' + y.id + ' is neither active nor superseded' AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (x:Node {id: row.properties.id})
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
  + e.key + ' ' + coalesce(e.named, 'none') + ', not one to that node' AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (x:Node {id: row.properties.id})-[r:ABSORBED|REPLACED]->(a)
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
// As check_session_invariants checks every summary's COVERS, for the new ones.
UNWIND $nodes AS row
MATCH (x:Node {id: row.properties.id, role: 'summary'})-[:PREDECESSOR]->(splice:Node)
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
RETURN 'COVERS: summary ' + x.id + ' does not cover a contiguous chain segment of real turns '
  + 'of this session ' + CASE WHEN absorbed IS NULL THEN 'starting right after its splice point'
    ELSE 'continuing the segment of summary ' + absorbed.id + ' it absorbed' END
  + ', or its COVERS edges, covers_count, covers_first_id or covers_last_id do not describe it'
  AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (x:Node {id: row.properties.id, role: 'summary'})
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
// Tool pairs: a new node's USES are its tool_use_ids; its ANSWERS reach the tool uses of its
// predecessor (stored or new) it names; and a live turn after a message with tool uses is
// the one message answering all of them.
UNWIND $nodes AS row
MATCH (n:Node {id: row.properties.id})
WHERE n.tool_use_ids IS NOT NULL OR EXISTS { (n)-[:USES]->() }
WITH n, CASE WHEN n.tool_use_ids IS :: LIST<STRING NOT NULL> NOT NULL THEN n.tool_use_ids ELSE [] END AS named,
  // Expanded from n: t's label is read, not matched, or a planner that took the session's
  // tool uses for few sought them all for each n (quadratic in a session's tool uses).
  COLLECT { MATCH (n)-[u:USES]->(t)
            WHERE 'ToolUse' IN labels(t) AND t.session_id = n.session_id AND t.tenant = n.tenant
            RETURN t.id AS id ORDER BY u.order } AS uses,
  COUNT { (n)-[:USES]->() } AS edges
WHERE uses <> named OR edges <> size(uses)
RETURN 'USES: ' + n.id + ' has USES edges that are not its tool_use_ids' AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (n:Node {id: row.properties.id})
WHERE n.answered_ids IS NOT NULL OR EXISTS { (n)-[:ANSWERS]->() }
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
  + ') among the tool uses of its predecessor' AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (c:Node {id: row.properties.id})-[:PREDECESSOR]->(n:Node)
WHERE n.tool_use_ids IS :: LIST<STRING NOT NULL> NOT NULL AND size(n.tool_use_ids) > 0
  AND c.deleted_at IS NULL AND c.role <> 'summary'
  AND NOT coalesce(c.role = 'tool' AND c.answered_ids IS :: LIST<STRING NOT NULL> NOT NULL
                   AND size(c.answered_ids) = size(n.tool_use_ids)
                   AND all(i IN n.tool_use_ids WHERE i IN c.answered_ids), false)
RETURN 'tool pair: ' + c.id + ' (' + toString(c.role) + ') follows ' + n.id + ', whose tool uses ('
  + reduce(ids = '', i IN n.tool_use_ids | ids + CASE WHEN ids = '' THEN '' ELSE ', ' END + i)
  + ') only a tool message answering every one of them may follow' AS violation
UNION ALL
UNWIND $nodes AS row
MATCH (c:Node {id: row.properties.id, role: 'tool'})-[:PREDECESSOR]->(n:Node)
WHERE coalesce(n.out_of_context, false) <> coalesce(c.out_of_context, false)
RETURN 'out of the context: tool message ' + c.id
  + CASE WHEN c.out_of_context THEN ' is' ELSE ' is not' END + ' out of the context but '
  + n.id + ', whose tool uses it answers,' + CASE WHEN c.out_of_context THEN ' is not' ELSE ' is' END
  AS violation
