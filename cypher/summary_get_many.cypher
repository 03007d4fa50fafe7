// name: summary_get_many
// returns: one row {summary, covers_ids} per id that is a summary of the tenant; covers_ids in chain order
// purpose: summary nodes with the ids they cover (the record of what was summarized)
// params: summary_ids, tenant
UNWIND $summary_ids AS summary_id
MATCH (n:Node {id: summary_id, tenant: $tenant, role: 'summary'})
RETURN
  // include: node_map
  AS summary,
  COLLECT { MATCH (n)-[c:COVERS]->(x:Node) RETURN x.id ORDER BY c.order } AS covers_ids
