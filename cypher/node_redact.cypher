// name: node_redact
// returns: one row {problem, session_id, node, summary_ids, erased_media, events}; no row when the node does not exist for the tenant
// purpose: erases a node's content for good (docs/guides/redaction.md): its content, blocks, thinking and tokens become the redacted form, it stops carrying media (a medium no other node carries is deleted, data and all; the node keeps each one's hash and size), it is stamped redacted_at and redaction_reason; its id, role, edges, tool-use ids and names, READ and COVERS history stay; moves summary_version (remembered renders held the old content) and announces node_redacted naming the summaries and carry nodes that may quote it; a redacted node is a problem, never written twice
// params: node_id, tenant, now, reason, content, thinking, tokens, blocks, redacted_media
MATCH (n:Node {id: $node_id, tenant: $tenant})
MATCH (s:Session {id: n.session_id, tenant: $tenant})
// include: session_write_lock
WITH s, n, n.redacted_at AS redacted_before,
  CASE WHEN n.redacted_at IS NOT NULL THEN 'node_redacted' END AS problem
// Whatever stands in for the node with its own text may quote it: the summaries whose
// segment holds it (the one holding its COVERS edge and every summary that absorbed that
// one) and the carry nodes summarizing it, unless they are redacted themselves.
CALL (n) {
  OPTIONAL MATCH (n)<-[:COVERS]-(:Node)<-[:ABSORBED*0..]-(summary:Node)
  RETURN summary AS quoting
  UNION
  OPTIONAL MATCH (n)<-[:CARRIES_OVER]-(carry:Node)
  RETURN carry AS quoting
}
WITH s, n, redacted_before, problem, quoting
ORDER BY quoting.seq DESC
WITH s, n, redacted_before, problem,
  [q IN collect(DISTINCT quoting) WHERE q.redacted_at IS NULL | q.id] AS summary_ids
OPTIONAL CALL (s, n, problem) {
  WITH * WHERE problem IS NULL
  SET n.content = $content, n.thinking = $thinking, n.tokens = $tokens, n.blocks = $blocks,
    n.redacted_at = $now, n.redaction_reason = $reason, n.redacted_media = $redacted_media,
    // Renders remembered by any process held the old content: they stop being extended.
    s.summary_version = coalesce(s.summary_version, 0) + 1
  WITH n
  OPTIONAL MATCH (n)-[carried:CARRIES]->(medium:Media)
  DELETE carried
  WITH DISTINCT medium WHERE medium IS NOT NULL AND NOT EXISTS { (medium)<-[:CARRIES]-() }
  WITH medium, medium.sha256 AS sha256
  DETACH DELETE medium
  RETURN collect(sha256) AS erased_media
}
WITH s, n, problem, summary_ids, coalesce(erased_media, []) AS erased_media, CASE
  WHEN problem IS NULL THEN [{type: 'node_redacted', node_id: n.id, reason: $reason,
                              summary_ids: summary_ids}]
  ELSE [] END AS announced
// include: events_write
RETURN problem, s.id AS session_id, summary_ids, erased_media, events,
  // include: node_map
  AS node
