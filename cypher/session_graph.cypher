// name: session_graph
// returns: rows {session_id, nodes} per session of the tenant, each of up to 1,000 of its nodes (deleted ones only when $include_deleted), in no set order
// purpose: the capsule contract: every live node; each capsule's row carries its coverage plus the caller subtrees of covered turns, minus ids that no longer exist; relics are flagged and carry none
// params: session_ids, tenant, include_deleted, preview_length
// Capsules: under the rolling strategy the active summary (spec §6); under the branch and
// segmented strategies every summary some live branch tip renders (segmented: each of its
// stand-ins, one capsule per segment). Coverage restates COVERS only (a
// summary's own and, through ABSORBED, its absorbed summaries'): no seq arithmetic,
// nothing that depends on HEAD.
UNWIND $session_ids AS session_id
MATCH (s:Session {id: session_id, tenant: $tenant})-[:HEAD]->(head:Node)
OPTIONAL MATCH (s)-[:ACTIVE_SUMMARY]->(active:Node)
WITH s, head, coalesce(s.summary_strategy, 'rolling') = 'rolling' AS rolling,
  active.id AS active_id
CALL (s, rolling) {
  WITH * WHERE NOT rolling
  // include: branch_tips
  CALL (s, tip) {
    WITH s, tip AS h
    // include: applicable_summary
  }
  // Segmented: every stand-in of the tip's render is a capsule (one per segment).
  UNWIND CASE WHEN stand_ins IS NULL THEN [summary.id]
    ELSE [x IN stand_ins WHERE x.role = 'summary' | x.id] END AS capsule_id
  RETURN collect(DISTINCT capsule_id) AS rendered
}
WITH s, head, rolling,
  CASE WHEN rolling THEN [x IN [active_id] WHERE x IS NOT NULL] ELSE rendered END AS capsule_ids
CALL (s, head, rolling, capsule_ids) {
  MATCH (n:Node {session_id: s.id})
  WHERE n.deleted_at IS NULL OR $include_deleted
  RETURN collect(n {
    .id, .role, .seq, .tokens, .fork_of, .blocks, .out_of_context,
    preview: left(n.content, $preview_length),
    side_branch: coalesce(n.side_branch, false),
    deleted: n.deleted_at IS NOT NULL,
    predecessor_id: [(n)-[:PREDECESSOR]->(p:Node) | p.id][0],
    caller_id: [(n)-[:CALLER]->(c:Node) | c.id][0],
    is_head: n = head,
    retired: n.retired_at IS NOT NULL,
    superseded_summary: CASE
      WHEN n.role <> 'summary' THEN false
      WHEN rolling THEN coalesce(n.superseded_summary, false)
      ELSE NOT n.id IN capsule_ids
    END,
    covers_ids: CASE WHEN n.id IN capsule_ids THEN COLLECT {
      MATCH (n)-[:ABSORBED*0..]->(holder:Node)-[covers:COVERS]->(turn:Node)
      CALL (turn) {
        RETURN turn AS member, 0 AS depth
        UNION
        MATCH (member:Node)-[:CALLER]->+(turn)
        RETURN member, 1 AS depth
      }
      WITH holder, covers, member, depth
      WHERE member.deleted_at IS NULL
      RETURN member.id
      ORDER BY holder.covers_count, covers.order, depth, member.seq
    } END
  }) AS nodes
}
// The nodes come a part of 1,000 a row (render_context says why).
UNWIND range(0, CASE WHEN size(nodes) > 0 THEN size(nodes) - 1 ELSE 0 END, 1000) AS part
RETURN s.id AS session_id, nodes[part..part + 1000] AS nodes
