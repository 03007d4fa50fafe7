"""Following a turn (service/turns/streaming.py), without a database: a follower hears each
model call's events in order, then the turn's result or its error; one that leaves stops
hearing while the turn runs on to its end; a provider that cannot stream is told its
reply's blocks once whole; the offline model streams word by word."""
import asyncio

import pytest

from service.errors import BadInput
from service.model.blocks import Text, ToolUse
from service.turns.providers import BlockClosed, ModelReply, OfflineProvider, Prompt, TextDelta
from service.turns.streaming import CallStarted, Heard, RunningTurns, TurnFollower, answer


async def test_a_follower_hears_each_call_then_the_result():
    follower, running = TurnFollower(), RunningTurns()

    async def turn(listener):
        for call in (1, 2):
            hear = listener.call_started(f"head-{call}", 3)
            hear(TextDelta(0, f"call {call}"))
        return "the stored turn"

    heard = [item async for item in follower.follow(running.start(turn(follower)))]
    assert heard == [CallStarted(1, "head-1", 3), Heard(1, TextDelta(0, "call 1")),
                     CallStarted(2, "head-2", 3), Heard(2, TextDelta(0, "call 2")),
                     "the stored turn"]


async def test_a_failed_turn_raises_its_error_to_its_follower():
    follower, running = TurnFollower(), RunningTurns()

    async def turn(listener):
        raise BadInput("refused")

    with pytest.raises(BadInput):
        async for _ in follower.follow(running.start(turn(follower))):
            pass


async def test_a_follower_that_leaves_leaves_the_turn_running():
    follower, running = TurnFollower(), RunningTurns()
    go_on, finished = asyncio.Event(), []

    async def turn(listener):
        hear = listener.call_started("head", 2)
        hear(TextDelta(0, "first"))
        await go_on.wait()
        hear(TextDelta(0, " second"))  # told to nobody
        finished.append("stored")
        return "turn"

    task = running.start(turn(follower))
    stream = follower.follow(task)
    assert await anext(stream) == CallStarted(1, "head", 2)
    await stream.aclose()  # the subscriber left
    go_on.set()
    assert await task == "turn" and finished == ["stored"]
    assert follower._queue.empty()
    assert len(running) == 0


async def test_drain_waits_for_running_turns():
    running, release = RunningTurns(), asyncio.Event()

    async def turn():
        await release.wait()
        return "done"

    task = running.start(turn())
    asyncio.get_running_loop().call_soon(release.set)
    await running.drain(timeout=60)
    assert task.result() == "done"


async def test_a_provider_that_cannot_stream_tells_its_blocks_once_whole():
    class Whole:
        name, model = "whole", "whole-1"

        async def complete(self, prompt):
            return ModelReply("Calling it.", "whole-1", blocks=[
                {"type": "text", "text": "Calling it."},
                {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {"a": 1}}])

    heard = []
    reply = await answer(Whole(), Prompt(()), heard.append)
    assert reply.text == "Calling it."
    assert heard == [TextDelta(0, "Calling it."), BlockClosed(0, Text("Calling it.")),
                     BlockClosed(1, ToolUse("toolu_1", "f", {"a": 1}))]


async def test_the_offline_model_streams_its_reply_word_by_word():
    heard = []
    provider = OfflineProvider()
    streamed = await provider.stream(Prompt(()), heard.append)
    assert streamed == await provider.complete(Prompt(()))
    deltas = [e.text for e in heard if isinstance(e, TextDelta)]
    assert len(deltas) > 5 and "".join(deltas) == streamed.text
    assert heard[-1] == BlockClosed(0, Text(streamed.text))
