// name: node_readers_page
// returns: one row {node_id, total, readings} per node of the tenant: up to $limit {call, position} in the order read (newest first, or oldest first when $from_end); read_ids are not loaded
// purpose: which calls read each node, and where in their prompts, between (started_at, id) cursors (walks the nodes' READ edges only; service/store/paging.py)
// params: node_ids, tenant, after_key, after_id, before_key, before_id, from_end, limit
UNWIND $node_ids AS node_id
MATCH (n:Node {id: node_id, tenant: $tenant})
WHERE EXISTS { (:Session {id: n.session_id, tenant: $tenant}) }  // not an unfinished import's
CALL (n) {
  MATCH (n)<-[r:READ]-(c:Call)
  WHERE ($after_key IS NULL OR c.started_at < $after_key
         OR (c.started_at = $after_key AND c.id < $after_id))
    AND ($before_key IS NULL OR c.started_at > $before_key
         OR (c.started_at = $before_key AND c.id > $before_id))
  WITH c, r
  ORDER BY CASE WHEN $from_end THEN c.started_at END, CASE WHEN $from_end THEN c.id END,
           c.started_at DESC, c.id DESC
  LIMIT $limit
  RETURN collect({call: c {.*, output_id: [(c)-[:PRODUCED]->(o:Node) | o.id][0]},
                  position: r.position}) AS readings
}
RETURN node_id, readings, COUNT { (n)<-[:READ]-(:Call) } AS total
