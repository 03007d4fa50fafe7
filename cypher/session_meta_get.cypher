// name: session_meta_get
// returns: zero or one row {meta_version, extra_meta}: the stored JSON text as it is
// purpose: what a metadata save merges into (on a reader: a lagging one only costs a retry); session_update refuses the save unless both are still what the session holds
// params: session_id, tenant
// A read beside a committing save can pair that save's new meta_version with the
// extra_meta before it (seen about once in 1,500 racing saves), so the version alone
// cannot tell a merge that would drop the other save's key.
MATCH (s:Session {id: $session_id, tenant: $tenant})
RETURN coalesce(s.meta_version, 0) AS meta_version, coalesce(s.extra_meta, '{}') AS extra_meta
