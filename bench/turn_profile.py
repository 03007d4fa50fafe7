"""Where a turn's time goes (issue 35, "the turn's cost"): `python -m bench.turn_profile URI`.

On a running Neo4j (`ctxdag neo4j up`), for sessions of N turns (2N messages, bulk loaded,
uncompacted: every turn's prompt is the whole history, so each call writes 2N + 3 READ
edges), times `Turns.send_message` with workload 8's offline model and splits each turn:

- per statement: its wall time in the client, and what Neo4j reports for it
  (result_available_after + result_consumed_after), the rest being the network and the
  driver;
- the process's CPU time during the turn (Python and the driver's decoding);
- the PROFILE of the reply's write (the append with the call and its READ edges):
  db hits by operator.

Prints the split; measures nothing against a target.
"""
from __future__ import annotations

import asyncio
import statistics
import sys
import time
import uuid
from collections import defaultdict
from typing import Any

from service.config import Settings
from service.runtime import Runtime
from service.store import Database, Ledger, Limits, open_driver
from service.turns.service import Turns

from .content import assistant_text, user_text
from .loader import Loader, bench_queries
from .peer import PeerReplies
from .profiled import profiled


class StatementClock:
    """Wraps `db.driver.execute_query`: each statement's client wall time and server time."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.rows: list[tuple[str, float, float]] = []  # (statement, wall ms, server ms)
        driver = db.driver
        original = driver.execute_query
        names = {q.text: n for n, q in db.queries.items()}

        async def timed(text: str, params: Any = None, **kwargs: Any) -> Any:
            transform = kwargs["result_transformer_"]
            server = [0.0]

            async def keep(result: Any) -> Any:
                out = await transform(result)
                summary = await result.consume()
                server[0] = (summary.result_available_after or 0) + \
                    (summary.result_consumed_after or 0)
                return out

            kwargs["result_transformer_"] = keep
            t0 = time.perf_counter()
            out = await original(text, params, **kwargs)
            self.rows.append((names.get(text, "?"), (time.perf_counter() - t0) * 1000, server[0]))
            return out

        driver.execute_query = timed  # type: ignore[method-assign]


async def profile_reply(db: Database, turns: Turns, sid: str, text: str) -> dict[str, Any]:
    """The PROFILE of the reply's append (the one carrying a call), rolled back."""
    found: dict[str, Any] = {}
    execute = db._execute

    async def intercept(query: Any, bound: dict[str, Any], routing: Any, check: Any) -> Any:
        if query.name != "append_message" or next(iter(bound.values())).get("call") is None or found:
            return await execute(query, bound, routing, check)
        rows, plan = await profiled(db, query, bound)
        operators: list[tuple[str, int, int, str]] = []
        _walk(plan, operators)
        found["db_hits"] = sum(o[1] for o in operators)
        found["operators"] = operators
        return rows

    db._execute = intercept  # type: ignore[method-assign]
    try:
        await turns.send_message(sid, text)
    finally:
        del db._execute
    return found


def _walk(plan: dict[str, Any], out: list[tuple[str, int, int, str]]) -> None:
    if not plan:
        return
    args = plan.get("args", {})
    out.append((str(plan.get("operatorType", "?")).split("@")[0], int(plan.get("dbHits", 0)),
                int(plan.get("rows", 0)), str(args.get("Details", ""))[:110]))
    for child in plan.get("children", []):
        _walk(child, out)


async def one_size(db: Database, ledger: Ledger, loader: Loader, turns: Turns,
                   replies: PeerReplies, n: int, samples: int) -> None:
    chain = await loader.chain(f"turn profile {n}", 2 * n)
    sid = chain.session_id
    clock = StatementClock(db)
    walls, cpus = [], []
    per_statement: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for i in range(samples + 5):
        replies.next_text = assistant_text(n + i)
        clock.rows.clear()
        c0, t0 = time.process_time(), time.perf_counter()
        result = await turns.send_message(sid, user_text(n + i))
        wall, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
        if result.reply is None or result.compaction is not None and \
                result.compaction.status.value == "COMPACTED":
            raise RuntimeError(f"the turn compacted or failed: {result.error} {result.compaction}")
        if i < 5:
            continue  # warm-up
        walls.append(wall)
        cpus.append(cpu)
        for name, w, s in clock.rows:
            kind = name + (" (reply + call)" if name == "append_message"
                           and len([r for r in clock.rows if r[0] == name]) > 1
                           and (name, w, s) == [r for r in clock.rows if r[0] == name][-1]
                           else "")
            per_statement[kind].append((w, s))
    med = statistics.median
    reads = 2 * (n + samples + 5) + 1
    print(f"\nN = {n:,} turns ({2 * n:,} messages; the last call read {reads:,} nodes), "
          f"{samples} turns")
    print(f"  turn wall p50 {med(walls):.1f} ms, process CPU p50 {med(cpus):.1f} ms")
    for name, values in per_statement.items():
        print(f"  {name:40s} x{len(values) / samples:.0f}  wall p50 {med(v[0] for v in values):6.1f} ms"
              f"  Neo4j-side p50 {med(v[1] for v in values):6.1f} ms")
    plan = await profile_reply(db, turns, sid, user_text(n + samples + 5))
    print(f"  PROFILE of the reply's write: {plan['db_hits']:,} db hits")
    for op, hits, rows, details in sorted(plan["operators"], key=lambda o: -o[1]):
        if hits >= 100:
            print(f"    {op:32s} {hits:8,} hits {rows:7,} rows  {details}")


async def main(uri: str, sizes: list[int], samples: int) -> None:
    driver = open_driver(uri)
    try:
        db = Database(driver)
        await db.apply_schema()
        tenant = f"profile-{uuid.uuid4().hex[:8]}"
        runtime = Runtime.assemble(Settings.from_env({"CTXDAG_TENANT": tenant, "CTXDAG_CONTEXT_WINDOW": "10000000"}), db)
        loader_db = Database(driver, bench_queries())
        loader = Loader(loader_db, Ledger.open(loader_db, tenant, Limits()))
        replies = PeerReplies()
        turns = Turns(runtime.ledger, runtime.compactor, replies)
        for n in sizes:
            await one_size(db, runtime.ledger, loader, turns, replies, n, samples)
    finally:
        await driver.close()


if __name__ == "__main__":
    args = sys.argv[1:]
    asyncio.run(main(args[0] if args else "bolt://127.0.0.1:7697",
                     [int(a) for a in (args[1] if len(args) > 1 else "1000,5000").split(",")],
                     int(args[2]) if len(args) > 2 else 30))
