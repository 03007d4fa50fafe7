// name: draft_get
// returns: zero or one row {draft, opened, attempt, completion, last_finished_at}: the draft's properties; the node beginTurn wrote (null when it wrote none); its attempt recorded with $client_key ({call_id, node}, node null for a failed call), null when none; the attempt that completed it ({call_id, client_key}), null while it is open; when its latest attempt finished (null before any)
// purpose: a draft as completeTurn finds it, with what an earlier completion with the same client key stored
// params: draft_id, tenant, client_key
MATCH (d:Draft {id: $draft_id, tenant: $tenant})
OPTIONAL CALL (d) {
  MATCH (n:Node {id: d.opened_id, tenant: d.tenant})
  RETURN
  // include: node_map
  AS opened
}
OPTIONAL CALL (d) {
  MATCH (d)-[:ATTEMPT {client_key: $client_key}]->(c:Call)
  OPTIONAL MATCH (c)-[:PRODUCED]->(n:Node)
  RETURN {call_id: c.id, node:
  // include: node_map
  } AS attempt
  LIMIT 1
}
OPTIONAL CALL (d) {
  MATCH (d)-[a:ATTEMPT]->(c:Call)-[:PRODUCED]->(:Node)
  RETURN {call_id: c.id, client_key: a.client_key} AS completion
  LIMIT 1
}
OPTIONAL CALL (d) {
  MATCH (d)-[:ATTEMPT]->(c:Call)
  RETURN max(c.finished_at) AS last_finished_at
}
RETURN d {.*} AS draft, opened, attempt, completion, last_finished_at
