// name: check_session_nodes
// returns: zero or one row {nodes, edges, media}: a page of the session's nodes for the check (check_session's first page, read on from $skip)
// purpose: the ledger's invariants, checked on stored data, a page of nodes at a time
// params: session_id, tenant, skip, page
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: check_session_page
RETURN nodes, edges, media
