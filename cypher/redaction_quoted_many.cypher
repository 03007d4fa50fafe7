// name: redaction_quoted_many
// returns: rows {quoting_id, node_id}, in seq order, for each summary or carry node of the tenant whose text may quote a redacted node
// purpose: the reverse of redaction_quoters_many: the redacted nodes a summary's segment holds (its own COVERS and those of the summaries it absorbed) or a carry node summarizes, while it is not redacted itself
// params: node_ids, tenant
UNWIND $node_ids AS quoting_id
MATCH (q:Node {id: quoting_id, tenant: $tenant})
WHERE q.redacted_at IS NULL AND q.role IN ['summary', 'carry']
CALL (q) {
  MATCH (q)-[:ABSORBED*0..]->(:Node)-[:COVERS]->(n:Node)
  WHERE n.redacted_at IS NOT NULL
  RETURN n
  UNION
  MATCH (q)-[:CARRIES_OVER]->(n:Node)
  WHERE n.redacted_at IS NOT NULL
  RETURN n
}
RETURN quoting_id, n.id AS node_id
ORDER BY quoting_id, n.seq
