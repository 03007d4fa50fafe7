// fragment branch_tips: one row per live user-branch tip `tip` of session `s` — a live turn
// that is neither a summary nor on a spawned side branch, with no live such turn after it.
MATCH (tip:Node {session_id: s.id})
WHERE tip.deleted_at IS NULL AND tip.role <> 'summary' AND NOT tip.side_branch
  AND NOT EXISTS {
    (tip)<-[:PREDECESSOR]-(c:Node)
    WHERE c.deleted_at IS NULL AND c.role <> 'summary' AND NOT c.side_branch
  }
