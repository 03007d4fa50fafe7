// name: branch_list
// returns: one row {session_id, tip, length, is_head, holds_head, summary_id, stand_in_ids, name} per user branch, tips in seq order
// purpose: every live user-branch tip of each session, and the summary its render uses; summaries and spawned side branches are not user branches
// params: session_ids, tenant
UNWIND $session_ids AS session_id
MATCH (s:Session {id: session_id, tenant: $tenant})-[:HEAD]->(head:Node)
WITH s, head, COLLECT {
  MATCH (head)<-[:PREDECESSOR*0..]-(d:Node)
  RETURN d.id
} AS under_head
// include: branch_tips
CALL (s, tip) {
  WITH s, tip AS h
  // include: applicable_summary
}
WITH s, head, under_head, tip AS n, summary, stand_ins
OPTIONAL MATCH (s)-[named:NAMES]->(n)
RETURN s.id AS session_id,
  // include: node_map
  AS tip,
  n.depth + 1 AS length,
  n = head AS is_head,
  n.id IN under_head AS holds_head,
  summary.id AS summary_id,
  [x IN coalesce(stand_ins, []) WHERE x.role = 'summary' | x.id] AS stand_in_ids,
  named.name AS name
ORDER BY n.seq
