"""Delivery of session events to this process's subscribers, from the database.

Events are data: each write stores the events it announces in its own transaction,
numbered per session (service/store/events.py). A feed reads every subscribed session's
events after its subscribers' cursors, in sequence order, so a subscriber on any replica
receives the events of writes made through any replica, without gaps or duplicates. It
reads when this process committed events (the ledger tells it) and otherwise every
`poll_seconds`, and only while someone is subscribed: one statement per poll for all of
this process's subscribed sessions.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import AsyncIterator

from .errors import Conflict, CtxdagError, EventsExpired
from .store.db import Database
from .store.events import SessionEvent, events_after

log = logging.getLogger("ctxdag.events")

POLL_BATCH = 256  # events read per session per poll; more are read at once after
BACKLOG = 1024  # events queued for a subscriber that stopped reading before it is dropped
ENDED = 1 << 62  # the cursor of a subscriber that is given nothing more


@dataclass(eq=False)
class _Subscriber:
    cursor: int  # the last seq it was given
    queue: asyncio.Queue = field(default_factory=asyncio.Queue)


class EventFeed:
    def __init__(self, db: Database, poll_seconds: float = 0.2) -> None:
        self._db, self._poll_seconds = db, poll_seconds
        self._subscribers: dict[str, set[_Subscriber]] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None

    def committed(self, session_id: str, events: list[SessionEvent]) -> None:
        """This process committed `events` of `session_id`: read them now (in order with
        the other processes' events, so from the database)."""
        if session_id in self._subscribers:
            self._wake.set()

    async def stream(self, session_id: str, after: int) -> AsyncIterator[SessionEvent]:
        """The session's events after seq `after`, in order, then as they are written."""
        subscriber = _Subscriber(after)
        self._subscribers.setdefault(session_id, set()).add(subscriber)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="ctxdag-event-feed")
        self._wake.set()
        try:
            while True:
                item = await subscriber.queue.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            subscribers = self._subscribers.get(session_id, set())
            subscribers.discard(subscriber)
            if not subscribers:
                self._subscribers.pop(session_id, None)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        failures = 0
        while self._subscribers:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self._poll_seconds * (1 + failures))
            self._wake.clear()
            try:
                if await self._poll():
                    self._wake.set()  # a session had more than a batch waiting
                failures = 0
            except CtxdagError as e:  # Neo4j unavailable: cursors stay, nothing is lost
                failures = min(failures + 1, 25)
                log.warning("reading session events failed (%s); retrying", e.message)
            except Exception:  # never leave the subscribers waiting on a dead task
                failures = min(failures + 1, 25)
                log.exception("reading session events failed; retrying")

    async def _poll(self) -> bool:
        cursors = {session_id: min(s.cursor for s in subscribers)
                   for session_id, subscribers in self._subscribers.items() if subscribers}
        if not cursors:
            return False
        events = await events_after(self._db, cursors, POLL_BATCH)
        read: dict[str, int] = {}
        for event in events:
            read[event.session_id] = read.get(event.session_id, 0) + 1
            for subscriber in list(self._subscribers.get(event.session_id, ())):
                if event.seq == subscriber.cursor + 1:
                    self._deliver(subscriber, event)
                elif event.seq > subscriber.cursor + 1:  # retention forgot the ones between
                    self._end(subscriber, EventsExpired(
                        f"the events of session {event.session_id} after "
                        f"{subscriber.cursor} are no longer kept: reload the session and "
                        "subscribe without `after`"))
        return any(count >= POLL_BATCH for count in read.values())

    @staticmethod
    def _deliver(subscriber: _Subscriber, event: SessionEvent) -> None:
        if subscriber.queue.qsize() >= BACKLOG:
            # It stopped reading: it gets what is queued, then this, and resumes from there.
            EventFeed._end(subscriber, Conflict(
                f"the subscriber fell {BACKLOG} events behind; subscribe again with `after` "
                "set to the last event received"))
            return
        subscriber.queue.put_nowait(event)
        subscriber.cursor = event.seq

    @staticmethod
    def _end(subscriber: _Subscriber, error: CtxdagError) -> None:
        subscriber.queue.put_nowait(error)
        subscriber.cursor = ENDED
