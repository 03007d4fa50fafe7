// name: carriers_many
// returns: rows {node_id, carrier_id}, newest carry node first, for each node of the tenant some carry node summarizes
// purpose: which carry nodes stand for a turn on other branches (the reverse of their CARRIES_OVER edges)
// params: node_ids, tenant
UNWIND $node_ids AS node_id
MATCH (:Node {id: node_id, tenant: $tenant})<-[:CARRIES_OVER]-(c:Node)
RETURN node_id, c.id AS carrier_id
ORDER BY node_id, c.seq DESC
