// name: carried_many
// returns: rows {node_id, carried_id}, for each carry node of the tenant, the turns it summarizes in chain order
// purpose: a carry node's provenance: the turns of the branch it was carried from (its CARRIES_OVER edges)
// params: node_ids, tenant
UNWIND $node_ids AS node_id
MATCH (:Node {id: node_id, tenant: $tenant})-[e:CARRIES_OVER]->(x:Node)
RETURN node_id, x.id AS carried_id
ORDER BY node_id, e.order
