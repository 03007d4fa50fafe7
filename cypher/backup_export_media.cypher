// name: backup_export_media
// returns: zero or one row {media, next_seq, call_count}: a page of the session's media as backup_export returns them (its first page), read on from $media_skip
// purpose: a backup of a long session, read a page at a time (next_seq and call_count tell the session did not change meanwhile)
// params: session_id, tenant, media_skip, media_page
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN
  // include: backup_export_media
  AS media,
  s.next_seq AS next_seq,
  COUNT { MATCH (c:Call {session_id: s.id}) } AS call_count
