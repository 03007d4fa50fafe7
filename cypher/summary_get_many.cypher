// name: summary_get_many
// returns: one row {summary, covers_ids} per id that is a summary of the tenant; covers_ids in chain order
// purpose: summary nodes with the ids they cover (the record of what was summarized)
// params: summary_ids, tenant
UNWIND $summary_ids AS summary_id
MATCH (summary:Node {id: summary_id, tenant: $tenant, role: 'summary'})
RETURN summary {
  .*,
  predecessor_id: [(summary)-[:PREDECESSOR]->(p:Node) | p.id][0],
  caller_id: null
} AS summary,
  COLLECT { MATCH (summary)-[c:COVERS]->(x:Node) RETURN x.id ORDER BY c.order } AS covers_ids
