// name: session_get
// returns: zero or one row {session}
// purpose: one session of the tenant, with its ROOT and HEAD ids
// params: session_id, tenant
MATCH (s:Session {id: $session_id, tenant: $tenant})
MATCH (s)-[:ROOT]->(r:Node)
MATCH (s)-[:HEAD]->(h:Node)
RETURN s {
  .*, root_id: r.id, head_id: h.id,
  active_summary: [(s)-[:ACTIVE_SUMMARY]->(a:Node) | a {.id, .content}][0]
} AS session
