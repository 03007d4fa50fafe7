// name: transcript_source_set
// returns: one row {session_id} when the tenant holds the session; none otherwise
// purpose: keeps on a session the size and sha256 of the file text an import read when that import wrote no node (the file gained only lines that map to nothing, or it moved), so the next import of that text is recognised unread; null clears them (a read that degraded or held back entries); a file that moved ($source_file: where it is now, null: it did not) sets the session's source ($source) and its listed source file
// params: session_id, tenant, source_bytes, source_prefix_sha256, source, source_file
MATCH (s:Session {id: $session_id, tenant: $tenant})
SET s.source_bytes = $source_bytes, s.source_prefix_sha256 = $source_prefix_sha256,
  s.source = CASE WHEN $source_file IS NULL THEN s.source ELSE $source END,
  s.source_file = coalesce($source_file, s.source_file)
RETURN s.id AS session_id
