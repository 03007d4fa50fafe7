"""Workload 12: a tool-heavy agent session next to a text conversation of the same length.

The agent session is written through `append_message` with content blocks, as a runtime
keeps its session here: one user prompt, then rounds of an assistant reply (thinking with
its signature, a line of text, one tool call or two in parallel) and the message answering
it (a tool result of about 1,200 characters each, a file or a command's output); every
eighth round the assistant reports and the user asks the next thing. The text session is
the bulk loader's conversation (workload 7's messages). Both are rendered round robin, so
the ratio compares like with like; a turn of the agent loop (`sendMessage` offering a tool
the offline model calls, then `submitToolResults`) is sampled in turn with a text turn.
"""
from __future__ import annotations

import json
import time
from typing import Any

from service.context.render import render_context
from service.turns.requests import anthropic_messages, openai_chat, options

from .content import assistant_text, user_text
from .core import Bench
from .storage import checkpoint
from .timing import measure_round_robin

S12 = "12 agent session (tool blocks)"
TOOL = "lookup"
TOOLS = [{"name": TOOL, "description": "Looks a word up in the project's notes.",
          "input_schema": {"type": "object", "properties": {"word": {"type": "string"}},
                           "required": ["word"]}}]
RESULT_CHARS = 1_200
ROUNDS_PER_EXCHANGE = 8


def _result_text(i: int) -> str:
    text = f"$ grep -n 'section {i}' notes/*.md\n"
    k = i
    while len(text) < RESULT_CHARS:
        text += f"notes/part{k % 17}.md:{k % 400}: {assistant_text(k)[:100]}\n"
        k += 7
    return text[:RESULT_CHARS]


def agent_round(i: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Round i: the assistant's blocks (one tool call, or two in parallel every third round)
    and the tool message answering them."""
    calls = 2 if i % 3 == 2 else 1
    uses = [{"type": "tool_use", "id": f"toolu_b{i:05d}_{c}", "name": ("read_file", "grep")[c],
             "input": {"path": f"src/module_{(i + c) % 40}.py", "pattern": f"def handler_{i}",
                       "context_lines": 3}} for c in range(calls)]
    reply = [{"type": "thinking", "thinking": assistant_text(i)[:400],
              "signature": f"EqQBCkgIAxABGAIiQL{i:08d}" + "x" * 80},
             {"type": "text", "text": user_text(i)[:120]}] + uses
    results = [{"type": "tool_result", "tool_use_id": u["id"],
                "content": [{"type": "text", "text": _result_text(i * 2 + c)}]}
               for c, u in enumerate(uses)]
    return reply, results


def content_bytes(blocks: list[dict[str, Any]] | str) -> int:
    return len((blocks if isinstance(blocks, str) else json.dumps(blocks)).encode())


async def build_agent_session(b: Bench, messages: int) -> tuple[str, int, int]:
    """Writes the agent session; returns its id, the messages written and their bytes."""
    session = await b.ledger.sessions.create(title="bench agent session",
                                             system_prompt="You are a coding agent.")
    head = b.ledger.head
    written, size, i = 0, 0, 0

    async def append(role: str, blocks: Any = None, content: str | None = None) -> None:
        nonlocal written, size
        await head.append_message(session.id, role, content, blocks=blocks)
        written += 1
        size += content_bytes(blocks if blocks is not None else content)

    await append("user", content=user_text(0))
    while written < messages:
        reply, results = agent_round(i)
        await append("assistant", reply)
        await append("tool", results)
        i += 1
        if i % ROUNDS_PER_EXCHANGE == 0 and written + 2 <= messages:
            await append("assistant", content=assistant_text(i))
            await append("user", content=user_text(i))
    return session.id, written, size


async def agent(b: Bench) -> None:
    s = b.sizes
    start = await checkpoint(b)
    t0 = time.perf_counter()
    agent_id, messages, size = await build_agent_session(b, s.agent_messages)
    build_s = time.perf_counter() - t0
    grown = await checkpoint(b)
    store = grown["store"] - start["store"]
    b.add(S12, f"store bytes per message, {messages:,} agent messages", None, None,
          value=round(store / messages), unit="bytes/message",
          note=f"content {size / messages:.0f} B/message as JSON blocks (text workload 7: ~317 B);"
               f" written by append_message in {build_s:.1f} s ({messages / build_s:.0f} messages/s)",
          store_bytes=store, content_bytes_per_message=round(size / messages, 1))
    b.log(f"{S12}: {messages} agent messages, {store / messages:.0f} bytes/message")
    violations = await b.ledger.violations(agent_id)
    if violations:
        raise RuntimeError(f"the agent session is unsound: {violations[:3]}")

    text = await b.loader.chain("bench agent: text twin", messages)
    await _renders(b, "uncompacted", agent_id, text.session_id, messages,
                   s.chain_samples_for(messages))

    # Compacted: each keeps about the same tail (the agent's cut lands on a pair-safe
    # boundary, so its tail is a few messages longer or shorter).
    tail_tokens = sum(n.tokens for n in (await render_context(b.ledger, agent_id)).nodes[-40:])
    agent_cut = await b.runtime.compactor.compact(agent_id, keep_recent_tokens=tail_tokens)
    text_tail = sum(n.tokens for n in (await render_context(b.ledger, text.session_id)).nodes[-40:])
    text_cut = await b.runtime.compactor.compact(text.session_id, keep_recent_tokens=text_tail)
    if agent_cut.summary is None or text_cut.summary is None:
        raise RuntimeError(f"a compaction did not write a summary: {agent_cut.status}, "
                           f"{text_cut.status}")
    await _renders(b, "compacted", agent_id, text.session_id, messages, s.compacted_samples)
    await _request_bodies(b, agent_id)
    await _loop_turns(b)


async def _renders(b: Bench, how: str, agent_id: str, text_id: str, messages: int,
                   samples: int) -> None:
    sizes = {k: len((await render_context(b.ledger, sid)).nodes)
             for k, sid in (("agent", agent_id), ("text", text_id))}
    before = b.trips()
    stats, base = await measure_round_robin(
        b.driver, {"agent": lambda: render_context(b.ledger, agent_id),
                   "text": lambda: render_context(b.ledger, text_id)},
        samples=samples, warmup=3 if how == "uncompacted" else 20)
    b.floors.append({"around": f"{S12} render {how} (round robin)", **base.as_dict()})
    trips = (b.trips() - before) / sum(st.n + (3 if how == "uncompacted" else 20)
                                       for st in stats.values())
    for kind in ("agent", "text"):
        b.add(S12, f"render from HEAD, {how}: {kind} session ({messages:,} messages, renders "
              f"{sizes[kind]} nodes)", stats[kind], base, round_trips=trips,
              note="sampled round robin with the other session's render")
    ratio = stats["agent"].p50_ms / stats["text"].p50_ms
    b.add(S12, f"render from HEAD, {how}: agent / text (p50 ratio)", None, None,
          value=round(ratio, 2), unit="×",
          note=f"{sizes['agent']} vs {sizes['text']} nodes; p50 {stats['agent'].p50_ms:.1f} vs "
               f"{stats['text'].p50_ms:.1f} ms")
    b.log(f"{S12}: render {how}: agent {stats['agent'].p50_ms:.1f} ms, text "
          f"{stats['text'].p50_ms:.1f} ms ({ratio:.2f}×)")


async def _request_bodies(b: Bench, agent_id: str) -> None:
    """The provider bodies of the compacted agent render: the pure functions alone."""
    view = await render_context(b.ledger, agent_id)
    media: dict[str, str] = {}  # the session holds no images or documents
    offered = options(tools=TOOLS)

    async def anthropic() -> None:
        anthropic_messages(view.nodes, media, offered)

    async def openai() -> None:
        openai_chat(view.nodes, media, offered)

    stats, base = await measure_round_robin(b.driver, {"anthropic": anthropic, "openai": openai},
                                            samples=200, warmup=10)
    size = len(json.dumps(anthropic_messages(view.nodes, media, offered)).encode())
    for name, label in (("anthropic", "ANTHROPIC_MESSAGES"), ("openai", "OPENAI_CHAT")):
        b.add(S12, f"request body {label} of that render ({len(view.nodes)} nodes)",
              stats[name], base, note=f"the pure function alone (service/turns/requests.py); "
                                      f"the Anthropic body is {size / 1024:.0f} KiB of JSON")


async def _loop_turns(b: Bench) -> None:
    """A turn of the agent loop (sendMessage offering a tool the offline model calls, then
    submitToolResults) sampled in turn with a plain text turn, each on a 100-message session."""
    turns = b.runtime.turns
    history = b.sizes.send_history
    text = await b.loader.chain("bench agent: text turns", history)
    loop = await b.loader.chain("bench agent: loop turns", history)
    offered = options(tools=TOOLS)
    counter = iter(range(300_000, 10**9))

    async def text_turn() -> None:
        result = await turns.send_message(text.session_id, user_text(next(counter)))
        if result.reply is None:
            raise RuntimeError(f"send_message produced no reply: {result.error}")

    async def loop_turn() -> None:
        i = next(counter)
        asked = await turns.send_message(loop.session_id, f"Please {TOOL} the word w{i}.",
                                         options=offered)
        open_ids = asked.open_tool_use_ids
        if len(open_ids) != 1:
            raise RuntimeError(f"the offline model did not call {TOOL}: {asked.error}")
        answered = await turns.submit_tool_results(loop.session_id, [
            {"type": "tool_result", "tool_use_id": open_ids[0],
             "content": [{"type": "text", "text": _result_text(i)}]}], options=offered)
        if answered.reply is None or answered.open_tool_use_ids:
            raise RuntimeError(f"the loop did not end in an answer: {answered.error}")

    before = b.trips()
    samples = b.sizes.loop_samples
    stats, base = await measure_round_robin(b.driver, {"text": text_turn, "loop": loop_turn},
                                            samples=samples, warmup=5)
    b.floors.append({"around": f"{S12} turns (round robin)", **base.as_dict()})
    trips = b.trips() - before
    b.add(S12, "a text turn: send_message (offline provider)", stats["text"], base,
          note="sampled in turn with the loop turn below; sessions start with "
               f"{history} messages")
    b.add(S12, "a loop turn: send_message offering a tool + submit_tool_results", stats["loop"],
          base, note=f"two model calls and four nodes (the message, the tool call, the result, "
                     f"the answer); {stats['loop'].p50_ms / stats['text'].p50_ms:.2f}× the text "
                     f"turn; {trips / (3 * (samples + 5)):.1f} statements per model call, as "
                     "in a text turn")
    b.log(f"{S12}: loop turn p50 {stats['loop'].p50_ms:.1f} ms, text turn "
          f"{stats['text'].p50_ms:.1f} ms")

