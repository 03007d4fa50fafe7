"""PROFILE a service statement once, in a transaction that is rolled back.

Gives the database hits (total and the heaviest operators) that explain a figure;
a write is profiled without leaving anything behind.
"""
from __future__ import annotations

from typing import Any, Mapping

from neo4j import AsyncDriver

from service.store import Database


async def profile(db: Database, name: str, params: Mapping[str, Any]) -> dict[str, Any]:
    text = db.queries[name].text
    bound = db.queries[name].bind(params)
    driver: AsyncDriver = db.driver
    async with driver.session(database=db.database) as session:
        tx = await session.begin_transaction()
        try:
            result = await tx.run("PROFILE " + text, bound)
            summary = await result.consume()
        finally:
            await tx.rollback()
    plan = summary.profile or {}
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
