// name: summaries_covering_many
// returns: rows {node_id, summary_id}, newest summary first, for each node of the tenant some summary covers
// purpose: which summaries' segments contain each node: the summary holding its COVERS edge and every summary that absorbed that one (a summary holds COVERS only to the turns it newly covered)
// params: node_ids, tenant
UNWIND $node_ids AS node_id
MATCH (:Node {id: node_id, tenant: $tenant})<-[:COVERS]-(holder:Node)
MATCH (s:Node)-[:ABSORBED*0..]->(holder)
RETURN node_id, s.id AS summary_id
ORDER BY node_id, s.seq DESC
