// name: session_graph
// returns: one row {session_id, nodes} per session of the tenant; nodes in seq order
// purpose: the capsule contract (spec §6): every live node; the active summary's row carries its coverage plus the caller subtrees of covered turns, minus ids that no longer exist; superseded rows are flagged and carry none
// params: session_ids, tenant
// Coverage restates COVERS only: no seq arithmetic, nothing that depends on HEAD.
UNWIND $session_ids AS session_id
MATCH (s:Session {id: session_id, tenant: $tenant})-[:HEAD]->(head:Node)
OPTIONAL MATCH (s)-[:ACTIVE_SUMMARY]->(active:Node)
CALL (s, head, active) {
  MATCH (n:Node {session_id: s.id})
  WHERE n.deleted_at IS NULL
  RETURN collect(n {
    .id, .role, .seq,
    predecessor_id: [(n)-[:PREDECESSOR]->(p:Node) | p.id][0],
    caller_id: [(n)-[:CALLER]->(c:Node) | c.id][0],
    is_head: n = head,
    superseded_summary: coalesce(n.superseded_summary, false),
    covers_ids: CASE WHEN n = active THEN COLLECT {
      MATCH (n)-[covers:COVERS]->(turn:Node)
      CALL (turn) {
        RETURN turn AS member, 0 AS depth
        UNION
        MATCH (member:Node)-[:CALLER]->+(turn)
        RETURN member, 1 AS depth
      }
      WITH covers, member, depth
      WHERE member.deleted_at IS NULL
      RETURN member.id
      ORDER BY covers.order, depth, member.seq
    } END
  }) AS nodes
}
RETURN s.id AS session_id, nodes
