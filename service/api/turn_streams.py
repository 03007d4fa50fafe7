"""Streamed turns: each turn mutation's twin as a subscription, telling the reply as the
model produces it, then the stored turn (thin: the turn is service/turns/service.py's,
its following service/turns/streaming.py's; docs/guides/agent-runtimes.md, "Streaming")."""
from __future__ import annotations

from typing import Annotated, Any, AsyncGenerator, Awaitable, Callable, Union

import strawberry
from strawberry.types import Info

from ..turns import providers
from ..turns.streaming import CallStarted, Heard, TurnFollower, TurnListener
from .blocks import ContentBlock, block_out
from .types import Turn, turn_out


@strawberry.type(description=(
    "A model call of the turn is sent: `call` numbers it (1 first). A turn makes another "
    "when its first overflowed the context (after a passive compaction) or called only "
    "recall tools the service answers: drop what an earlier call streamed."))
class ModelCallStarted:
    call: int
    prompt_head_id: strawberry.ID = strawberry.field(description=(
        "The prompt's last node (the turn's message, or the tool results, when it wrote one)."))
    read_count: int = strawberry.field(description=(
        "The nodes the call reads (ROOT and summaries included): its READ edges."))


@strawberry.type(description="More text of the reply's content block `index`.")
class ReplyTextDelta:
    call: int
    index: int = strawberry.field(description="The block's position as the model numbers it.")
    text: str


@strawberry.type(description="More of the model's reasoning in thinking block `index`.")
class ReplyThinkingDelta:
    call: int
    index: int
    thinking: str


@strawberry.type(description=(
    "The reply's content block `index` is whole: a tool use with its complete input, a "
    "thinking block with its signature, a text."))
class ReplyBlockClosed:
    call: int
    index: int
    block: ContentBlock


@strawberry.type(description=(
    "The turn is stored: the same Turn its mutation returns (the reply, or the error of a "
    "failed call). The last event."))
class TurnDone:
    turn: Turn


TurnStreamEvent = Annotated[
    Union[ModelCallStarted, ReplyTextDelta, ReplyThinkingDelta, ReplyBlockClosed, TurnDone],
    strawberry.union("TurnStreamEvent", description=(
        "What a streamed turn tells, in order: per model call ModelCallStarted, then its "
        "deltas and closed blocks; last TurnDone with the stored turn."))]

STREAM_TYPES = (ModelCallStarted, ReplyTextDelta, ReplyThinkingDelta, ReplyBlockClosed,
                TurnDone)


async def followed(info: Info, turn: Callable[[TurnListener], Awaitable[Any]]
                   ) -> AsyncGenerator[TurnStreamEvent, None]:
    """Runs `turn(listener)` as the process's task, not this operation's, and yields what
    it tells until it is done: a subscriber that leaves mid-reply leaves it running, and
    it completes and is stored as if nobody had followed it."""
    follower = TurnFollower()
    task = info.context.runtime.running.start(turn(follower))
    async for item in follower.follow(task):
        yield _out(item)


def _out(item: Any) -> TurnStreamEvent:
    if isinstance(item, CallStarted):
        return ModelCallStarted(call=item.call, prompt_head_id=item.prompt_head_id,
                                read_count=item.read_count)
    if isinstance(item, Heard):
        event = item.event
        if isinstance(event, providers.TextDelta):
            return ReplyTextDelta(call=item.call, index=event.index, text=event.text)
        if isinstance(event, providers.ThinkingDelta):
            return ReplyThinkingDelta(call=item.call, index=event.index,
                                      thinking=event.thinking)
        return ReplyBlockClosed(call=item.call, index=event.index, block=block_out(event.block))
    return TurnDone(turn=turn_out(item))
