"""PROFILE a service statement once, in a transaction that is rolled back.

Gives the database hits (total and the heaviest operators) that explain a figure;
a write is profiled without leaving anything behind. `profile_of` profiles a statement
with the very parameters the service sends, so the bench never restates them.
"""
from __future__ import annotations

from typing import Any, Awaitable, Callable, Mapping

from neo4j import AsyncDriver

from service.store import Database


async def profile(db: Database, name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    _, found = await _profiled(db, db.queries[name].text, db.queries[name].bind(params))
    return found


async def profile_of(db: Database, name: str, work: Callable[[], Awaitable[Any]]
                     ) -> dict[str, Any]:
    """The PROFILE of statement `name` as `work()` sends it. Its first run of `name` is
    profiled in a transaction that is rolled back instead of being run; `work` goes on with
    the rows it returned (whatever `work` does with them, or raises, is not kept)."""
    found: dict[str, Any] = {}
    execute = db._execute

    async def intercept(query: Any, bound: dict[str, Any], routing: Any, check: Any) -> Any:
        if query.name != name or found:
            return await execute(query, bound, routing, check)
        rows, plan = await _profiled(db, query.text, bound)
        found.update(plan)
        if check is not None:
            check(rows)
        return rows

    db._execute = intercept  # type: ignore[method-assign]
    try:
        await work()
    except Exception:  # noqa: BLE001 - only the statement's plan is wanted
        if not found:
            raise
    finally:
        del db._execute
    if not found:
        raise RuntimeError(f"the work never ran statement {name}")
    return found


async def _profiled(db: Database, text: str, bound: Mapping[str, Any]
                    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    driver: AsyncDriver = db.driver
    async with driver.session(database=db.database) as session:
        tx = await session.begin_transaction()
        try:
            result = await tx.run("PROFILE " + text, bound)
            rows = [dict(zip(record.keys(), record)) async for record in result]
            summary = await result.consume()
        finally:
            await tx.rollback()
    return rows, _plan_figures(summary.profile or {})


def _plan_figures(plan: Mapping[str, Any]) -> dict[str, Any]:
    operators: list[tuple[str, int, int]] = []
    _walk(plan, operators)
    operators.sort(key=lambda o: -o[1])
    return {
        "db_hits": sum(o[1] for o in operators),
        "top_operators": [{"operator": o[0], "db_hits": o[1], "rows": o[2]}
                          for o in operators[:4] if o[1] > 0],
    }


def _walk(plan: Mapping[str, Any], out: list[tuple[str, int, int]]) -> None:
    if not plan:
        return
    out.append((str(plan.get("operatorType", "?")).split("@")[0], int(plan.get("dbHits", 0)),
                int(plan.get("rows", 0))))
    for child in plan.get("children", []):
        _walk(child, out)


async def server_ms(db: Database, name: str, params: Mapping[str, Any], runs: int = 10
                    ) -> float:
    """Median time Neo4j reports for the statement (until available + until consumed):
    the rest of a call's wall time is the network, the driver's decoding and Python."""
    bound = db.queries[name].bind(params)
    times = []
    async with db.driver.session(database=db.database) as session:
        for _ in range(runs):
            result = await session.run(db.queries[name].text, bound)
            summary = await result.consume()
            times.append((summary.result_available_after or 0)
                         + (summary.result_consumed_after or 0))
    times.sort()
    return float(times[len(times) // 2])
