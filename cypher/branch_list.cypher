// name: branch_list
// returns: one row {session_id, tip, length, is_head, holds_head} per user branch, tips in seq order
// purpose: every live user-branch tip of each session; summaries and spawned side branches are not user branches
// params: session_ids, tenant
UNWIND $session_ids AS session_id
MATCH (s:Session {id: session_id, tenant: $tenant})-[:HEAD]->(head:Node)
WITH s, head, COLLECT {
  MATCH (head)<-[:PREDECESSOR*0..]-(d:Node)
  RETURN d.id
} AS under_head
MATCH (tip:Node {session_id: s.id})
WHERE tip.deleted_at IS NULL AND tip.role <> 'summary' AND NOT tip.side_branch
  AND NOT EXISTS {
    (tip)<-[:PREDECESSOR]-(c:Node)
    WHERE c.deleted_at IS NULL AND c.role <> 'summary' AND NOT c.side_branch
  }
WITH s, head, under_head, tip AS n
RETURN s.id AS session_id,
  // include: node_map
  AS tip,
  n.depth + 1 AS length,
  n = head AS is_head,
  n.id IN under_head AS holds_head
ORDER BY n.seq
