// name: node_children_many
// returns: one row {parent_id, node} per live child (PREDECESSOR points at the parent), in seq order
// purpose: what grew from nodes: replies, forks, spawned side branches, summaries spliced there
// params: node_ids, tenant
UNWIND $node_ids AS parent_id
MATCH (parent:Node {id: parent_id, tenant: $tenant})<-[:PREDECESSOR]-(n:Node)
WHERE n.deleted_at IS NULL AND EXISTS { (:Session {id: parent.session_id, tenant: $tenant}) }
RETURN parent_id,
  // include: node_map
  AS node
ORDER BY n.seq
