// name: redaction_quoters_many
// returns: rows {node_id, quoting_id}, newest quoting node first, for each redacted node of the tenant a summary or carry node may quote
// purpose: the summaries (COVERS and every summary that absorbed the holder) and carry nodes (CARRIES_OVER) standing in for a redacted node with their own text, themselves not redacted: what may still quote what was erased
// params: node_ids, tenant
UNWIND $node_ids AS node_id
MATCH (n:Node {id: node_id, tenant: $tenant})
WHERE n.redacted_at IS NOT NULL
CALL (n) {
  MATCH (n)<-[:COVERS]-(:Node)<-[:ABSORBED*0..]-(summary:Node)
  RETURN summary AS quoting
  UNION
  MATCH (n)<-[:CARRIES_OVER]-(carry:Node)
  RETURN carry AS quoting
}
WITH node_id, quoting WHERE quoting.redacted_at IS NULL
RETURN node_id, quoting.id AS quoting_id
ORDER BY node_id, quoting.seq DESC
