// fragment branch_names_follow: after a batch of nodes was added to session `s`, moves each
// branch name whose tip now has live user turns after it down to the tip its branch grew
// to, as node_write moves it one turn at a time: at each step the first such turn (lowest
// seq) takes it. Only named tips that grew are walked, through what they grew by.
// Expects s in scope.
CALL (s) {
  MATCH (s)-[named:NAMES]->(tip:Node)
  WHERE EXISTS {
    (tip)<-[:PREDECESSOR]-(c:Node)
    WHERE c.deleted_at IS NULL AND c.role <> 'summary' AND NOT c.side_branch
  }
  MATCH (tip) ((a:Node)<-[:PREDECESSOR]-(b:Node)
    WHERE b.deleted_at IS NULL AND b.role <> 'summary' AND NOT b.side_branch
      AND NOT EXISTS {
        (a)<-[:PREDECESSOR]-(earlier:Node)
        WHERE earlier.seq < b.seq AND earlier.deleted_at IS NULL
          AND earlier.role <> 'summary' AND NOT earlier.side_branch
      })+ (grown:Node)
  WHERE NOT EXISTS {
    (grown)<-[:PREDECESSOR]-(c:Node)
    WHERE c.deleted_at IS NULL AND c.role <> 'summary' AND NOT c.side_branch
  }
  CREATE (s)-[moved:NAMES]->(grown)
  SET moved = properties(named)
  DELETE named
}
