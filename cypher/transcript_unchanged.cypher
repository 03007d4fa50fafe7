// name: transcript_unchanged
// returns: one row {session_id, nodes} per session of the tenant last imported from exactly the file text $source_prefix_sha256 names; none when no session was
// purpose: recognises a transcript file that holds nothing new (its size and the sha256 of its name, format and text as an import stored them on its session) before it is parsed
// params: tenant, source_bytes, source_prefix_sha256
// The session is found through session_source_prefix (migration 012).
MATCH (s:Session {source_prefix_sha256: $source_prefix_sha256})
WHERE s.tenant = $tenant AND s.source_bytes = $source_bytes
RETURN s.id AS session_id,
  COUNT { (n:Node {session_id: s.id}) WHERE n.deleted_at IS NULL } AS nodes
