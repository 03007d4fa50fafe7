"""The storage invariants of a session, checked on the stored data."""
from __future__ import annotations

from typing import AsyncIterator

from . import validate
from .db import Database


async def violations(db: Database, tenant: str, session_id: str) -> list[str]:
    validate.identifier(session_id, "session id")
    return await _check(db, tenant, session_id)


async def _check(db: Database, tenant: str, session_id: str) -> list[str]:
    rows = await db.read("check_session", session_id=session_id, tenant=tenant)
    return [row["violation"] for row in rows]


async def check_each(db: Database,
                     tenant: str | None = None) -> AsyncIterator[tuple[str, list[str]]]:
    """(session id, violations) for every session of `tenant`, or of every tenant when None.

    One statement lists the sessions, then each is checked by the same statement as
    `violations`, one at a time, so a large store is never checked in one transaction.
    """
    for row in await db.read("check_session_ids", tenant=tenant):
        if row["tenant"] is None:
            yield row["session_id"], ["tenant: the session has no tenant"]
            continue
        yield row["session_id"], await _check(db, row["tenant"], row["session_id"])


async def check_all(db: Database, tenant: str | None = None) -> dict[str, list[str]]:
    """The sessions with broken invariants, each with its violations; empty when all are sound."""
    return {session_id: found async for session_id, found in check_each(db, tenant)
            if found}
