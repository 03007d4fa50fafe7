// name: session_get_many
// returns: one row {session} per id that is a session of the tenant, with its ROOT and HEAD ids
// purpose: sessions by id, for lookups and batched loaders
// params: session_ids, tenant
UNWIND $session_ids AS session_id
MATCH (s:Session {id: session_id, tenant: $tenant})
MATCH (s)-[:ROOT]->(r:Node)
// Read committed: while an append swaps the HEAD edge, a reader may see neither edge
// (head_id null); the caller reads again.
OPTIONAL MATCH (s)-[:HEAD]->(h:Node)
RETURN s {
  .*, root_id: r.id, head_id: h.id,
  active_summary: [(s)-[:ACTIVE_SUMMARY]->(a:Node) | a {.id, .content}][0]
} AS session
