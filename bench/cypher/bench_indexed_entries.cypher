// name: bench_indexed_entries
// returns: one row {entries}: the nodes and sessions of every tenant (what ledger_text indexes)
// purpose: bench-only: the entries the full-text index holds, from the count store (workload 17 divides the index's bytes by them)
CALL () { MATCH (n:Node) RETURN count(n) AS nodes }
CALL () { MATCH (s:Session) RETURN count(s) AS sessions }
RETURN nodes + sessions AS entries
