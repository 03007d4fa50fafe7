// Summary coverage as the summary strategies store it (docs/concepts/strategies.md): a
// summary's COVERS edges name only the turns it newly covered, orders 0..covers_new_count-1,
// and (summary)-[:ABSORBED]->(absorbed) stands for the rest of its segment. Before, every
// summary held COVERS edges to its whole segment, orders 0..covers_count-1.
// A summary lacking covers_new_count is in the old shape; each statement converts only those
// and is idempotent. The absorbed summary's covers_count property (never its edges) says how
// many leading COVERS edges it stands for, so the order summaries are converted in is moot.
// A summary that absorbed another: its first absorbed.covers_count COVERS edges go, the rest
// are renumbered from 0, and the ABSORBED edge is written. The summary it replaced as the
// session's active summary was not recorded: the one it absorbed is the best knowledge
// (under the rolling strategy it was the active one), so replaced_id and REPLACED name it.
MATCH (x:Node {role: 'summary'})
WHERE x.absorbed_id IS NOT NULL AND x.covers_new_count IS NULL
MATCH (absorbed:Node {id: x.absorbed_id})
WHERE absorbed.session_id = x.session_id AND absorbed.role = 'summary'
WITH x, absorbed, absorbed.covers_count AS absorbed_count
CALL (x, absorbed_count) {
  MATCH (x)-[c:COVERS]->(:Node)
  WHERE c.order < absorbed_count
  DELETE c
}
CALL (x, absorbed_count) {
  MATCH (x)-[c:COVERS]->(:Node)
  SET c.order = c.order - absorbed_count
}
MERGE (x)-[:ABSORBED]->(absorbed)
MERGE (x)-[:REPLACED]->(absorbed)
SET x.covers_new_count = x.covers_count - absorbed_count, x.replaced_id = absorbed.id;
// Every other summary (it absorbed nothing) newly covered its whole segment.
MATCH (x:Node {role: 'summary'})
WHERE x.covers_new_count IS NULL AND x.absorbed_id IS NULL
SET x.covers_new_count = x.covers_count;
// Any summary still lacking it names an absorbed summary that is not stored (a dangling
// absorbed_id): its edges are left as they are and it counts them, so `ctxdag check` names it.
MATCH (x:Node {role: 'summary'})
WHERE x.covers_new_count IS NULL
SET x.covers_new_count = COUNT { (x)-[:COVERS]->() };
