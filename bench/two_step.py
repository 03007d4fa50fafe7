"""Workload 3, the two-step turn: `Turns.begin_turn` and `Turns.complete_turn` (a runtime
that calls its own model: the draft stored, its request body built, the reply and the
call written after it) beside `Turns.send_message` with the offline provider, each on a
session of its own with the same history, sampled round robin in the same run. The
runtime's model is not timed: its reply is the offline provider's for the same prompt."""
from __future__ import annotations

import uuid
from dataclasses import replace

from service.turns import requests

from .content import assistant_text, user_text
from .core import Bench
from .timing import measure_round_robin
from .writes import S3


async def two_step_turns(b: Bench) -> None:
    turns = b.runtime.turns
    history = b.sizes.send_history
    sessions = {mode: (await b.loader.chain(f"bench two-step {mode}", history)).session_id
                for mode in ("one call", "two steps")}
    counter = 0

    async def send() -> None:
        nonlocal counter
        counter += 1
        result = await turns.send_message(sessions["one call"], user_text(300_000 + counter))
        if result.reply is None:
            raise RuntimeError(f"send_message produced no reply: {result.error}")

    async def two_steps() -> None:
        nonlocal counter
        counter += 1
        draft = await turns.begin_turn(sessions["two steps"], user_text(300_000 + counter))
        # The body a runtime sends, as the draft's `request` field builds it.
        media = await b.ledger.nodes.media_of(draft.view.nodes)
        requests.anthropic_messages(draft.view.nodes, media, replace(draft.options,
                                    model="claude-sonnet-4-5", max_tokens=1024))
        result = await turns.complete_turn(draft.id, uuid.uuid4().hex, model="bench-model",
                                           content=assistant_text(counter),
                                           usage={"input_tokens": 1200, "output_tokens": 80})
        if result.reply is None:
            raise RuntimeError("complete_turn stored no reply")

    stats, base = await measure_round_robin(
        b.driver, {"one call": send, "two steps": two_steps},
        samples=b.sizes.loop_samples * 2, warmup=5)
    b.floors.append({"around": f"{S3} two-step turn (round robin)", **base.as_dict()})
    b.add(S3, "Turns.send_message (offline provider), one call", stats["one call"], base,
          note=f"sampled in turn with the row below; sessions start with {history} messages")
    ratio = stats["two steps"].p50_ms / stats["one call"].p50_ms
    b.add(S3, "begin_turn + complete_turn (the runtime's own model)", stats["two steps"], base,
          note=f"{ratio:.2f}× send_message (p50): the draft stored and read back, the request "
               "body built, the reply and its call written")
    b.log(f"{S3}: two-step turn p50 {stats['two steps'].p50_ms:.1f} ms, send_message "
          f"{stats['one call'].p50_ms:.1f} ms")
