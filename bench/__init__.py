"""The ctxdag benchmark harness: `make bench` (or `python -m bench [--quick]`).

It starts its own managed Neo4j (service.neo4j_local) in a temporary home, loads
data, measures the service's own calls, and prints every figure as p50/p95 in ms
and as a ratio to the floor measured in the same run: the median round trip of
`RETURN 1` over the same async driver. It prints numbers; it never asserts timings.
Results go to bench/results/latest.json. See docs/benchmarks.md.
"""
