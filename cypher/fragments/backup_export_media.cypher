// fragment backup_export_media: the media the session `s`'s nodes carry, at positions
// [$media_skip, $media_skip + $media_page) in sha256 order (a page of them:
// backup_export_media reads the pages after backup_export's).
  COLLECT {
    MATCH (carrier:Node {session_id: s.id})-[:CARRIES]->(m:Media {tenant: $tenant})
    USING INDEX carrier:Node(session_id)
    WITH DISTINCT m
    RETURN {sha256: m.sha256, media_type: m.media_type, data: m.data, bytes: m.bytes} AS medium
    ORDER BY medium.sha256
    SKIP $media_skip LIMIT $media_page
  }
