"""The storage invariants of a session, checked on the stored data."""
from __future__ import annotations

from . import validate
from .db import Database


async def violations(db: Database, tenant: str, session_id: str) -> list[str]:
    validate.identifier(session_id, "session id")
    rows = await db.read("check_session", session_id=session_id, tenant=tenant)
    return [row["violation"] for row in rows]
