"""Session events, published in process (the API exposes them as a subscription).

The ledger publishes `node_appended` and `head_moved` after each committed write
(service/store/head.py), `summary_retired` (store/summaries.py) and
`summary_strategy_changed` (store/sessions.py); compaction publishes `compaction_*`.
"""
from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
import uuid
from datetime import datetime, timezone
from typing import AsyncIterator, Literal


CompactionTrigger = Literal["manual", "auto", "passive"]


def _event_id() -> str:
    return f"evt_{uuid.uuid4().hex}"


def _now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class CompactionStarted:
    session_id: str
    trigger: CompactionTrigger
    type: str = field(default="compaction_started", init=False)
    id: str = field(default_factory=_event_id, compare=False)
    at: datetime = field(default_factory=_now, compare=False)


@dataclass(frozen=True)
class CompactionFinished:
    session_id: str
    trigger: CompactionTrigger
    summary_id: str
    covered_count: int
    tokens_before: int
    tokens_after: int
    type: str = field(default="compaction_finished", init=False)
    id: str = field(default_factory=_event_id, compare=False)
    at: datetime = field(default_factory=_now, compare=False)

    @property
    def token_delta(self) -> int:
        return self.tokens_after - self.tokens_before


@dataclass(frozen=True)
class CompactionFailed:
    session_id: str
    trigger: CompactionTrigger
    reason: str
    code: str
    type: str = field(default="compaction_failed", init=False)
    id: str = field(default_factory=_event_id, compare=False)
    at: datetime = field(default_factory=_now, compare=False)


@dataclass(frozen=True)
class NodeAppended:
    session_id: str
    node_id: str
    role: str
    predecessor_id: str | None
    type: str = field(default="node_appended", init=False)
    id: str = field(default_factory=_event_id, compare=False)
    at: datetime = field(default_factory=_now, compare=False)


@dataclass(frozen=True)
class HeadMoved:
    session_id: str
    previous_head_id: str
    head_id: str
    type: str = field(default="head_moved", init=False)
    id: str = field(default_factory=_event_id, compare=False)
    at: datetime = field(default_factory=_now, compare=False)


@dataclass(frozen=True)
class SummaryRetired:
    session_id: str
    summary_id: str
    restored_summary_id: str | None  # the session's active summary now
    type: str = field(default="summary_retired", init=False)
    id: str = field(default_factory=_event_id, compare=False)
    at: datetime = field(default_factory=_now, compare=False)


@dataclass(frozen=True)
class SummaryStrategyChanged:
    session_id: str
    strategy: str
    type: str = field(default="summary_strategy_changed", init=False)
    id: str = field(default_factory=_event_id, compare=False)
    at: datetime = field(default_factory=_now, compare=False)


SessionEvent = (CompactionStarted | CompactionFinished | CompactionFailed | NodeAppended
                | HeadMoved | SummaryRetired | SummaryStrategyChanged)


class EventBus:
    """Fan-out per session to every current subscriber; slow subscribers never block."""

    def __init__(self, queue_size: int = 256) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[SessionEvent]]] = {}
        self._queue_size = queue_size

    def publish(self, event: SessionEvent) -> None:
        for queue in self._subscribers.get(event.session_id, ()):
            if queue.full():
                queue.get_nowait()  # drop the oldest rather than stall the writer
            queue.put_nowait(event)

    @contextlib.contextmanager
    def subscribe(self, session_id: str):
        queue: asyncio.Queue[SessionEvent] = asyncio.Queue(self._queue_size)
        self._subscribers.setdefault(session_id, set()).add(queue)
        try:
            yield queue
        finally:
            subscribers = self._subscribers.get(session_id, set())
            subscribers.discard(queue)
            if not subscribers:
                self._subscribers.pop(session_id, None)

    async def stream(self, session_id: str) -> AsyncIterator[SessionEvent]:
        with self.subscribe(session_id) as queue:
            while True:
                yield await queue.get()
