// name: backup_export_nodes
// returns: zero or one row {nodes}: a page of the session's nodes as backup_export returns them (its first page), read on from $node_skip
// purpose: a backup of a long session, read a page at a time
// params: session_id, tenant, node_skip, node_page
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN
  // include: backup_export_nodes
  AS nodes
