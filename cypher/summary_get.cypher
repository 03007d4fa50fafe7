// name: summary_get
// returns: zero or one row {summary, covers_ids}; covers_ids in chain order
// purpose: a summary node with the ids it covers (the record of what was summarized)
// params: summary_id, tenant
MATCH (summary:Node {id: $summary_id, tenant: $tenant, role: 'summary'})
RETURN summary {
  .*,
  predecessor_id: [(summary)-[:PREDECESSOR]->(p:Node) | p.id][0],
  caller_id: null
} AS summary,
  COLLECT { MATCH (summary)-[c:COVERS]->(x:Node) RETURN x.id ORDER BY c.order } AS covers_ids
