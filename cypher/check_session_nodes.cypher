// name: check_session_nodes
// returns: zero or one row {nodes, edges, media, next_seq}: a page of the session's nodes for the check (check_session's first page, read on after ($after_seq, $after_id)), and the session's next seq (a check begun again when it moved)
// purpose: the ledger's invariants, checked on stored data, a page of nodes at a time
// params: session_id, tenant, after_seq, after_id, page
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: check_session_page
RETURN nodes, edges, media, s.next_seq AS next_seq
