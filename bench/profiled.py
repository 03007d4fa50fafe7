"""A statement run under PROFILE in a transaction rolled back: its rows and Neo4j's profile,
nothing written (bench/turn_profile.py; tests/integration/test_session_scoped_plans.py)."""
from __future__ import annotations

from typing import Any

from service.store import Database


async def profiled(db: Database, query: Any, bound: dict[str, Any]
                   ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rows, profile plan) of `query` run with its `bound` parameters, rolled back."""
    async with db.driver.session(database=db.database) as session:
        tx = await session.begin_transaction()
        try:
            result = await tx.run("PROFILE " + query.text, bound)
            rows = [dict(zip(r.keys(), r)) async for r in result]
            summary = await result.consume()
        finally:
            await tx.rollback()
    return rows, summary.profile or {}
