// name: search_hits
// returns: rows {node, session_id, session_title, score, fields, label}, best first (then by node id), at most $limit from $offset; `node` is a session's ROOT when its title matched
// purpose: full-text search of one tenant's ledger (docs/guides/search.md): the best $scan matches of each index within the tenant, merged per node (a node matching in its text and its label is one hit, at its best score), then filtered by session, role and time
// params: tenant, node_query, label_query, scan, session_id, roles, since, until, offset, limit
// The Lucene queries carry the tenant (and the session) as clauses, so the index bounds
// the work to them; the exact comparisons after it keep a tenant whose name another's
// words contain from ever matching that other tenant's nodes.
// Both indexes are eventually consistent (migration 14): the updates of every committed
// write are applied first, so a search sees them.
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
WITH 1 AS refreshed
CALL () {
  WITH 1 AS one WHERE $node_query IS NOT NULL
  CALL db.index.fulltext.queryNodes('ledger_text', $node_query, {limit: $scan})
  YIELD node, score
  WHERE node.tenant = $tenant
  OPTIONAL MATCH (root:Node {session_id: node.id, depth: 0}) WHERE node:Session
  RETURN coalesce(root, node) AS hit, score,
         CASE WHEN node:Session THEN 'title' ELSE 'text' END AS field
  UNION ALL
  WITH 1 AS one WHERE $label_query IS NOT NULL
  CALL db.index.fulltext.queryRelationships('label_text', $label_query, {limit: $scan})
  YIELD relationship, score
  WHERE relationship.tenant = $tenant
  RETURN endNode(relationship) AS hit, score, 'label' AS field
}
WITH hit, max(score) AS score, collect(DISTINCT field) AS fields
WHERE hit.tenant = $tenant
  AND ($session_id IS NULL OR hit.session_id = $session_id)
  AND ($roles IS NULL OR hit.role IN $roles)
  AND ($since IS NULL OR hit.created_at >= $since)
  AND ($until IS NULL OR hit.created_at < $until)
ORDER BY score DESC, hit.id
SKIP $offset
LIMIT $limit
MATCH (s:Session {id: hit.session_id, tenant: $tenant})
OPTIONAL MATCH (s)-[l:LABELED]->(hit)
WITH hit AS n, s, score, fields, l
RETURN
  // include: node_map
  AS node,
  s.id AS session_id, s.title AS session_title, score, fields, l.text AS label
