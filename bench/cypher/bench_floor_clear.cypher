// name: bench_floor_clear
// returns: one row {deleted}
// purpose: bench-only (workload 8): removes what the floor's rounds wrote (their calls with their READ edges, and their nodes) from the floor's session, keeping its ROOT
// params: session_id, tenant, root_id
CALL () {
  MATCH (c:Call {session_id: $session_id, tenant: $tenant})
  DETACH DELETE c
}
CALL () {
  MATCH (n:Node {session_id: $session_id, tenant: $tenant})
  WHERE n.id <> $root_id
  DETACH DELETE n
  RETURN count(*) AS deleted
}
RETURN deleted
