"""Session events as data. Every write that changes a session stores the events it announces
in the same transaction (cypher/fragments/events_write.cypher), numbered per session in
commit order; any service process reads them back in that order (service/events.py).

A session keeps its newest `event_retention` events. The older ones are forgotten in
batches (`prune_batch`): after the write whose events reach a multiple of the batch, by a
statement of its own (cypher/events_prune.cypher), never inside the writes themselves.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

from ..errors import CtxdagError, NotFound
from ..model import validate
from .db import Database
from ..model.ids import utcnow
from ..model.models import native
from .problems import single_row
from ..model.validate import Limits

log = logging.getLogger("ctxdag.events")

# Told the events a write just committed, and their session.
OnCommit = Callable[[str, "list[SessionEvent]"], None]

PRUNE_BATCH = 100  # events forgotten at once (fewer when the retention is under 1,000)


def prune_batch(retention: int) -> int:
    """How many of a session's events are forgotten at once: a session holds from
    `retention` up to `retention + prune_batch - 1` events."""
    return max(1, min(PRUNE_BATCH, retention // 10))


@dataclass(frozen=True)
class SessionEvent:
    session_id: str
    seq: int  # the session's event number: 1, 2, … in commit order, without gaps
    type: str  # node_appended, head_moved, branch_deleted, compaction_*, summary_*
    at: datetime
    data: Mapping[str, Any]  # the fields of its type, also read as attributes

    @property
    def id(self) -> str:
        return f"{self.session_id}:{self.seq}"

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["data"][name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass(frozen=True)
class EventBounds:
    last_seq: int  # the session's newest event (0: none yet)
    pruned_through: int  # events up to this one are no longer kept


_COMMON = frozenset({"session_id", "tenant", "seq", "type", "at"})


def event_from_row(row: Mapping[str, Any]) -> SessionEvent:
    return SessionEvent(row["session_id"], row["seq"], row["type"], native(row["at"]),
                        {k: v for k, v in row.items() if k not in _COMMON})


class Events:
    def __init__(self, db: Database, tenant: str, limits: Limits,
                 on_commit: OnCommit | None = None) -> None:
        self._db, self._tenant, self._limits = db, tenant, limits
        self._on_commit = on_commit

    async def committed(self, session_id: str | None, events: Sequence[Mapping] | None) -> None:
        """A write committed `events` (rows of events_write): tells `on_commit`, and when
        they reach a multiple of the batch, forgets the events past retention."""
        if not events or session_id is None:
            return
        if self._on_commit is not None:
            self._on_commit(session_id, [event_from_row(e) for e in events])
        retention = self._limits.event_retention
        batch = prune_batch(retention)
        first, last = events[0]["seq"], events[-1]["seq"]
        if last > retention and last // batch > (first - 1) // batch:
            await self._prune(session_id)

    async def _prune(self, session_id: str) -> None:
        """The write committed: a failure here must not report it failed. What this batch
        leaves is forgotten by the next one, which forgets everything past retention."""
        try:
            await self._db.write("events_prune", session_id=session_id, tenant=self._tenant,
                                 now=utcnow(), event_retention=self._limits.event_retention)
        except CtxdagError as e:
            log.warning("forgetting the old events of session %s failed (%s); the next "
                        "batch will", session_id, e.message)

    async def append(self, session_id: str, event: Mapping[str, Any]) -> None:
        """Stores an event that announces no other write (compaction_started, _failed)."""
        validate.identifier(session_id, "session id")
        rows = await self._db.write("event_append", single_row(session_id, {}),
                                    session_id=session_id, tenant=self._tenant,
                                    event=dict(event), now=utcnow())
        await self.committed(session_id, rows[0]["events"])

    async def bounds(self, session_id: str) -> EventBounds:
        validate.identifier(session_id, "session id")
        rows = await self._db.read_on_leader("session_event_bounds", session_id=session_id,
                                             tenant=self._tenant)
        if not rows:
            raise NotFound("session", session_id)
        return EventBounds(rows[0]["last_seq"], rows[0]["pruned_through"])


async def events_after(db: Database, cursors: Mapping[str, int],
                       limit: int) -> list[SessionEvent]:
    """Up to `limit` events of each session after its cursor, in session and seq order, read
    on the leader (a follower could lag behind a commit this process just announced).
    Session ids are unique across tenants: the callers checked each session's tenant."""
    rows = await db.read_on_leader("events_after", limit=limit, cursors=[
        {"session_id": session_id, "after": after} for session_id, after in cursors.items()])
    return [event_from_row(row["event"]) for row in rows]
