// name: backup_export_media
// returns: zero or one row {media}: a page of the session's media as backup_export returns them (its first page), read on from $media_skip
// purpose: a backup of a long session, read a page at a time
// params: session_id, tenant, media_skip, media_page
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN
  // include: backup_export_media
  AS media
