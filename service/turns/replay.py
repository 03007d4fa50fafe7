"""Replay: rebuild the exact prompt of a past call from its reads, and compare with today.

Nodes are immutable, so the nodes a call read are the prompt it was sent; the
provider's message shape is a pure function of them (service/turns/messages.py). How
today's render of the call's head differs is the store's one prompt comparison
(`diff_reads`, service/store/calls.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..context.render import render_context
from ..store import Call, Ledger, Node, Purpose
from ..store.calls import diff_reads
from .messages import to_messages
from .requests import Tool


@dataclass(frozen=True)
class Replay:
    call: Call
    nodes: tuple[Node, ...]  # the prompt, in order
    system: str
    messages: tuple[dict, ...]
    # Today's render of the call's head, for calls whose prompt was a render:
    current_ids: tuple[str, ...] | None
    differs: bool | None  # None when the prompt was not a render (summaries, external calls)
    added: tuple[str, ...] = ()  # in today's render, not in the call's prompt
    dropped: tuple[str, ...] = ()  # in the call's prompt, not in today's render


def compared_head(call: Call) -> str | None:
    """The head whose render of today a replay compares with the call's prompt; None
    when the prompt was not a render (summaries, external calls)."""
    if call.head_id is None or call.purpose not in (Purpose.CHAT, Purpose.TASK):
        return None
    return call.head_id


def replayed(call: Call, nodes: Sequence[Node], today: Sequence[str] | None,
             media: Mapping[str, str],
             tools: Sequence[Mapping[str, Any]] | None = None) -> Replay:
    """The replay of `call` from the nodes it read (and the data of the media they name),
    the tools it was offered (as `Calls.tool_sets` holds them) and today's render of its
    compared head (None: no head to compare, or the head was deleted since)."""
    nodes = nodes[:call.prompt_count]  # recalled turns were read inside a tool result
    system, messages = to_messages(nodes, media, tools=[
        Tool(t["name"], t.get("description"), t.get("input_schema") or {})
        for t in tools or ()])
    if today is None:
        return Replay(call, tuple(nodes), system, tuple(messages), None, None)
    read, today = call.prompt_ids, tuple(today)
    diff = diff_reads(read, today)
    return Replay(call, tuple(nodes), system, tuple(messages), today, today != tuple(read),
                  added=diff.added, dropped=diff.dropped)


async def replay(ledger: Ledger, call_id: str) -> Replay:
    call = await ledger.calls.get(call_id)
    nodes = await ledger.calls.reads(call_id)
    head_id, today = compared_head(call), None
    if head_id is not None and not (await ledger.nodes.get(head_id)).deleted:
        today = (await render_context(ledger, call.session_id, head_id)).node_ids
    tools = None
    if call.tools_sha256 is not None:
        tools = (await ledger.calls.tool_sets([call.tools_sha256])).get(call.tools_sha256)
    return replayed(call, nodes, today, await ledger.nodes.media_of(nodes), tools)
