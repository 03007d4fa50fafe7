"""Diagnostic 10: what Neo4j takes to plan each hot statement.

A statement is planned on first use and again whenever Neo4j decides its cached
plan is stale (the graph's statistics drifted, as they do while a database grows).
EXPLAIN after `CALL db.clearQueryCaches()` times the planning alone (plus one round
trip); it runs last, since clearing the caches affects every later query.

Then what the service does about it: `Database.plan_statements` (run at service start)
plans every statement, and a process's first turn is timed with cold caches and after it.
"""
from __future__ import annotations

import time

from service.turns.service import Turns

from .core import Bench
from .content import user_text
from .timing import Stats

S10 = "10 planning (diagnostic)"
STATEMENTS = ("append_message", "fork_sibling", "render_context", "summary_persist",
              "call_record", "node_readers_page")


async def planning(b: Bench) -> None:
    base = await b.floor(S10)
    for name in STATEMENTS:
        query = b.db.queries[name]
        params = query.bind({p: None for p in query.params})
        times = []
        for _ in range(b.sizes.planning_rounds):
            await b.driver.execute_query("CALL db.clearQueryCaches()")
            t0 = time.perf_counter()
            await b.driver.execute_query("EXPLAIN " + query.text, params)
            times.append(time.perf_counter() - t0)
        stats = Stats.of(times)
        b.add(S10, f"plan {name} (EXPLAIN, caches cleared)", stats, base,
              note="paid on first use and on every replan")
    await first_turns(b)
    b.log(f"{S10}: done")


async def first_turns(b: Bench) -> None:
    """A new process's first send_message, with Neo4j's plan caches cleared: as it was
    (every statement planned on first use) and after Database.plan_statements."""
    chain = await b.loader.chain("bench first turn", 100)
    runtime = b.runtime
    planning_times, cold, warm = [], [], []

    async def first_turn(i: int) -> float:
        fresh = Turns(runtime.ledger, runtime.compactor, runtime.provider)  # remembers nothing
        t0 = time.perf_counter()
        await fresh.send_message(chain.session_id, user_text(200_000 + i))
        return time.perf_counter() - t0

    base = await b.floor(f"{S10} first turn")
    for i in range(b.sizes.planning_rounds):
        await b.driver.execute_query("CALL db.clearQueryCaches()")
        cold.append(await first_turn(2 * i))
        await b.driver.execute_query("CALL db.clearQueryCaches()")
        t0 = time.perf_counter()
        planned = await b.db.plan_statements()
        planning_times.append(time.perf_counter() - t0)
        warm.append(await first_turn(2 * i + 1))
    b.add(S10, "plan every statement at start (Database.plan_statements, caches cleared)",
          Stats.of(planning_times), base,
          note=f"{len(planned)} statements, each once with null parameters, rolled back")
    b.add(S10, "a process's first send_message, caches cleared", Stats.of(cold), base,
          note="each statement it runs is planned on its first use")
    b.add(S10, "a process's first send_message, after plan_statements", Stats.of(warm), base,
          note="what the first turn after `ctxdag serve` starts costs")
