// name: branch_list
// returns: one row {tip, length, is_head, holds_head} per user branch, in seq order of the tips
// purpose: every live user-branch tip; summaries and spawned side branches are not user branches
// params: session_id, tenant
MATCH (s:Session {id: $session_id, tenant: $tenant})-[:HEAD]->(head:Node)
WITH head, COLLECT {
  MATCH (head)<-[:PREDECESSOR*0..]-(d:Node)
  RETURN d.id
} AS under_head
MATCH (tip:Node {session_id: $session_id})
WHERE tip.deleted_at IS NULL AND tip.role <> 'summary' AND NOT tip.side_branch
  AND NOT EXISTS {
    (tip)<-[:PREDECESSOR]-(c:Node)
    WHERE c.deleted_at IS NULL AND c.role <> 'summary' AND NOT c.side_branch
  }
RETURN tip {
  .*,
  predecessor_id: [(tip)-[:PREDECESSOR]->(p:Node) | p.id][0],
  caller_id: [(tip)-[:CALLER]->(c:Node) | c.id][0]
} AS tip,
  tip.depth + 1 AS length,
  tip = head AS is_head,
  tip.id IN under_head AS holds_head
ORDER BY tip.seq
