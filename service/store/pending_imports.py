"""The claim an import in parts holds on the session it writes (transcript_parts.py), and the
clearing of what an unfinished one wrote: its nodes, which belong to no session yet, and
their tool uses. A claim is a PendingImport: the session's id (unique), a token of the
import's own, and when a part last touched it. An import claims the session for a new
token, which takes over any other import's claim and clears what it wrote; it releases the
claim once the session exists, or after clearing what it wrote when it fails.
"""
from __future__ import annotations

import contextlib
import uuid
from datetime import timedelta
from typing import AsyncIterator

from ..errors import CtxdagError
from .db import Database

# Nodes deleted a transaction when what an unfinished import wrote is cleared.
CLEAR_NODES = 5_000
# A claim no part touched for this long is an import a kill or an outage left: a part takes
# a second or so.
ABANDONED_AFTER = timedelta(minutes=10)


@contextlib.asynccontextmanager
async def import_claimed(db: Database, tenant: str, session_id: str) -> AsyncIterator[str]:
    """An import in parts of the session: clears what the tenant's abandoned imports left,
    claims the session for a new token (yielded), and when the import fails clears what it
    wrote before the error goes on. A kill (or a cancellation) clears nothing: the next
    import of the session, or clear_abandoned, does."""
    await clear_abandoned(db, tenant)
    token = await claimed(db, tenant, session_id)
    try:
        yield token
    except Exception:
        try:
            await released(db, session_id, token)
        except CtxdagError:
            pass  # the next import of the session, or clear_abandoned, clears it
        raise


async def claimed(db: Database, tenant: str, session_id: str) -> str:
    """Claims the session's import for a new token (taking over any other import's claim)
    and clears what the import held before wrote; the token."""
    token = uuid.uuid4().hex
    await db.write("transcript_pending_claim", tenant=tenant, session_id=session_id,
                   token=token)
    await _clear(db, session_id, token)
    return token


async def released(db: Database, session_id: str, token: str) -> None:
    """Clears what the import holding `token` wrote, then ends its claim."""
    await _clear(db, session_id, token)
    await db.write("transcript_pending_release", session_id=session_id, token=token)


async def _clear(db: Database, session_id: str, token: str) -> None:
    """Deletes the nodes and tool uses an unfinished import of the session wrote while its
    claim is `token`'s, a transaction at a time."""
    while True:
        rows = await db.write("transcript_pending_clear", session_id=session_id, token=token,
                              limit=CLEAR_NODES)
        if not rows or rows[0]["cleared"] == 0:
            return


async def clear_abandoned(db: Database, tenant: str) -> int:
    """Clears what the tenant's imports in parts left unfinished (a claim no part touched
    for ABANDONED_AFTER: a kill or an outage); how many it cleared."""
    rows = await db.read_on_leader("transcript_pending_stale", tenant=tenant,
                                   idle=ABANDONED_AFTER)
    for row in rows:
        await clear_unfinished(db, tenant, row["session_id"])
    return len(rows)


async def clear_unfinished(db: Database, tenant: str, session_id: str) -> None:
    """Clears what any unfinished import in parts of the session wrote (taking its claim
    over, as the session's next import in parts does), then ends the claim."""
    await released(db, session_id, await claimed(db, tenant, session_id))
