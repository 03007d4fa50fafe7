// name: node_children
// returns: one row {node} per live child (PREDECESSOR points at the parent), in seq order
// purpose: what grew from a node: replies, forks, spawned side branches, summaries spliced there
// params: node_id, tenant
MATCH (parent:Node {id: $node_id, tenant: $tenant})<-[:PREDECESSOR]-(n:Node)
WHERE n.deleted_at IS NULL
RETURN n {
  .*,
  predecessor_id: parent.id,
  caller_id: [(n)-[:CALLER]->(c:Node) | c.id][0]
} AS node
ORDER BY n.seq
