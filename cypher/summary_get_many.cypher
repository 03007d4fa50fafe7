// name: summary_get_many
// returns: one row {summary, covers_ids} per id that is a summary of the tenant; covers_ids in chain order
// purpose: summary nodes with the ids they cover (the record of what was summarized)
// params: summary_ids, tenant
// A summary holds COVERS to the turns it newly covered; the rest of its segment is held
// by the summary it absorbed, and so on (a smaller covers_count is an earlier part).
UNWIND $summary_ids AS summary_id
MATCH (n:Node {id: summary_id, tenant: $tenant, role: 'summary'})
RETURN
  // include: node_map
  AS summary,
  COLLECT {
    MATCH (n)-[:ABSORBED*0..]->(holder:Node)-[c:COVERS]->(x:Node)
    RETURN x.id ORDER BY holder.covers_count, c.order
  } AS covers_ids
