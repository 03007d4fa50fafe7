"""Following a turn as it runs: each model call's reply as it is produced, then the turn.

A followed turn runs as a task of its own (`RunningTurns.start`), not inside the request
that follows it, so a follower that leaves — a websocket closed mid-reply — only stops
hearing: the turn completes and is stored all the same, by the same steps and writes as a
turn nobody follows (service.py). The listener hears; it writes nothing and decides
nothing. At shutdown the process waits for the turns still running (`drain`).

A turn may make more than one model call (a retry after a passive compaction, the
service's answers to recall tool uses): each begins with `CallStarted` numbering it, and
its deltas carry that number, so a follower drops what an earlier call streamed.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any, AsyncIterator, Awaitable, Protocol

from .providers import BlockClosed, Listener, ModelProvider, ModelReply, Prompt, ReplyEvent, \
    TextDelta
from ..model.blocks import Text, Thinking, ToolUse

log = logging.getLogger("ctxdag.turns")


@dataclass(frozen=True)
class CallStarted:
    """The turn's model call number `call` (1 first) is sent: its prompt ends at
    `prompt_head_id` and reads `read_count` nodes (ROOT and summaries included)."""
    call: int
    prompt_head_id: str
    read_count: int


@dataclass(frozen=True)
class Heard:
    """A reply event of the turn's model call number `call`."""
    call: int
    event: ReplyEvent


class TurnListener(Protocol):
    def call_started(self, prompt_head_id: str, read_count: int) -> Listener:
        """A model call of the turn starts; the listener it returns hears its reply."""
        ...


async def answer(provider: ModelProvider, prompt: Prompt, listener: Listener) -> ModelReply:
    """The provider's reply to `prompt`, told to `listener` as it is produced; a provider
    that cannot stream tells each block of its reply once the reply is whole."""
    stream = getattr(provider, "stream", None)
    if stream is not None:
        return await stream(prompt, listener)
    reply = await provider.complete(prompt)
    for index, block in enumerate(_blocks(reply)):
        if isinstance(block, Text):
            listener(TextDelta(index, block.text))
        listener(BlockClosed(index, block))
    return reply


def _blocks(reply: ModelReply) -> list[Any]:
    if reply.blocks is None:
        return [Text(reply.text)] if reply.text else []
    made = {"text": lambda b: Text(b["text"]),
            "thinking": lambda b: Thinking(b["thinking"], b["signature"]),
            "tool_use": lambda b: ToolUse(b["id"], b["name"], b["input"])}
    return [made[b["type"]](b) for b in reply.blocks if b["type"] in made]


class TurnFollower:
    """One follower's view of one turn: its events queued until read. A follower that
    left is told nothing more (what was queued is dropped)."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._calls = 0
        self._left = False

    def call_started(self, prompt_head_id: str, read_count: int) -> Listener:
        self._calls += 1
        call = self._calls
        self._put(CallStarted(call, prompt_head_id, read_count))
        return lambda event: self._put(Heard(call, event))

    def _put(self, item: Any) -> None:
        if not self._left:
            self._queue.put_nowait(item)

    async def follow(self, task: asyncio.Task) -> AsyncIterator[Any]:
        """The turn's events as they come, then its result (what `task` returns); its
        error, raised, when it failed. Leaving early (closing the iterator, a cancelled
        read) leaves the task running."""
        done = object()
        task.add_done_callback(lambda _: self._put(done))
        try:
            while True:
                item = await self._queue.get()
                if item is done:
                    break
                yield item
            yield task.result()
        finally:
            self._left = True
            while not self._queue.empty():
                self._queue.get_nowait()


class RunningTurns:
    """The followed turns this process runs, each a task its follower does not own."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task] = set()

    def start(self, turn: Awaitable[Any]) -> asyncio.Task:
        task = asyncio.ensure_future(turn)
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # Its follower, if still there, is given the error; it is retrieved here so
            # a turn nobody follows any more does not fail unheard.
            log.debug("a followed turn failed: %r", task.exception())

    def __len__(self) -> int:
        return len(self._tasks)

    async def drain(self, timeout: float) -> None:
        """Waits for the running turns (at shutdown), at most `timeout` seconds; those
        still running then are cancelled (a cancelled turn writes no reply)."""
        if not self._tasks:
            return
        pending = set(self._tasks)
        _, late = await asyncio.wait(pending, timeout=timeout)
        for task in late:
            task.cancel()
        for task in late:
            with contextlib.suppress(BaseException):
                await task
