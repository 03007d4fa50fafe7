"""Diagnostic 10: what Neo4j takes to plan each hot statement.

A statement is planned on first use and again whenever Neo4j decides its cached
plan is stale (the graph's statistics drifted, as they do while a database grows).
EXPLAIN after `CALL db.clearQueryCaches()` times the planning alone (plus one round
trip); it runs last, since clearing the caches affects every later query.
"""
from __future__ import annotations

import time

from .core import Bench
from .timing import Stats

S10 = "10 planning (diagnostic)"
STATEMENTS = ("append_message", "fork_sibling", "render_context", "summary_persist",
              "call_record", "calls_reading")


async def planning(b: Bench) -> None:
    base = await b.floor(S10)
    for name in STATEMENTS:
        query = b.db.queries[name]
        params = {p: None for p in query.params}
        times = []
        for _ in range(3):
            await b.driver.execute_query("CALL db.clearQueryCaches()")
            t0 = time.perf_counter()
            await b.driver.execute_query("EXPLAIN " + query.text, params)
            times.append(time.perf_counter() - t0)
        stats = Stats.of(times)
        b.add(S10, f"plan {name} (EXPLAIN, caches cleared)", stats, base,
              note="paid on first use and on every replan")
    b.log(f"{S10}: done")
