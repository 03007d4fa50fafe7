// name: backup_export_nodes
// returns: zero or one row {nodes, next_seq, call_count}: a page of the session's nodes as backup_export returns them (its first page), read on after the last of the page before
// purpose: a backup of a long session, read a page at a time (next_seq and call_count tell the session did not change meanwhile)
// params: session_id, tenant, node_after_seq, node_after_id, node_page
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN
  // include: backup_export_nodes
  AS nodes,
  s.next_seq AS next_seq,
  COUNT { MATCH (c:Call {session_id: s.id}) } AS call_count
