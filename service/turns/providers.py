"""Model providers behind one interface: the rendered nodes in, a reply out.

`OfflineProvider` is the embedded default: deterministic, no network, and it says
so in every reply. `service.llm.anthropic_provider.AnthropicProvider` is used when
ANTHROPIC_API_KEY is set.

A provider that can stream has `stream(prompt, listener)` beside `complete`: it tells the
listener the reply as it is produced (`ReplyEvent`s: text and thinking deltas, each block
as it closes) and returns the same `ModelReply` `complete` would have returned for it. A
turn someone is following uses it (service/turns/streaming.py); one nobody follows calls
`complete`.
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence, Union

from ..store import Node, Role
from ..model.blocks import Block, Text, ToolResult, ToolUse, answered_ids
from ..model.ids import new_id
from ..tokens import estimate_tokens
from .requests import Options, Tool


@dataclass(frozen=True)
class Prompt:
    """What a provider is asked: a rendered node list (ROOT first), the data of the media it
    names (by hash), and the tools offered. Each provider turns it into its request with
    service/turns/requests.py, the function a client's `RenderedContext.request` uses."""

    nodes: tuple[Node, ...]
    media: Mapping[str, str] = field(default_factory=dict)
    options: Options = field(default_factory=Options)


@dataclass(frozen=True)
class ModelReply:
    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # stored on the reply node
    blocks: list[dict[str, Any]] | None = None  # the reply's content blocks; None: `text`
    stop_reason: str | None = None
    # Prompt caching, as the provider reports it (None: not reported).
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None


@dataclass(frozen=True)
class TextDelta:
    """More text of the reply's content block `index`."""
    index: int
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """More reasoning of the reply's thinking block `index`."""
    index: int
    thinking: str


@dataclass(frozen=True)
class BlockClosed:
    """The reply's content block `index` is complete: a tool use with its whole input, a
    thinking block with its signature, a text."""
    index: int
    block: Block


ReplyEvent = Union[TextDelta, ThinkingDelta, BlockClosed]
Listener = Callable[[ReplyEvent], None]  # called on the event loop; must not block


class ModelProvider(Protocol):
    name: str
    model: str

    async def complete(self, prompt: Prompt) -> ModelReply:
        """Answers the prompt.

        Raises ContextOverflow when the prompt does not fit, ModelUnavailable or
        ModelError for other failures.
        """
        ...


_FIRST_SENTENCE = re.compile(r"^(.*?[.!?])(\s|$)")


class OfflineProvider:
    """A deterministic stand-in model: it restates the last user message and what it read.

    With tools offered it takes part in the agent loop by one documented rule: when the
    prompt ends in a user message that names an offered tool (the tool's name as a word),
    it calls that tool (the first such in the order offered; a fresh `toolu_…` id) with an
    input built from the tool's
    schema (each required string property set to the message's first sentence, numbers 0,
    booleans false, lists [], objects {}); when the prompt ends in tool results, it answers
    with each tool's name and the first line of its result.
    """

    name = "offline"
    model = "offline-echo"

    async def complete(self, prompt: Prompt) -> ModelReply:
        nodes = prompt.nodes
        last = nodes[-1] if nodes else None
        if last is not None and last.role is Role.TOOL and answered_ids(last.blocks):
            return self._reply(_from_results(nodes[-2], last), nodes)
        last_user = next((n for n in reversed(nodes) if n.role is Role.USER), None)
        said = " ".join(last_user.content.split()) if last_user else ""
        match = _FIRST_SENTENCE.match(said)
        said = (match.group(1) if match else said)[:200]
        if last is not None and last is last_user and prompt.options.tools:
            called = _tool_named(prompt.options.tools, last_user.content)
            if called is not None and (prompt.options.tool_choice is None
                                       or prompt.options.tool_choice.mode != "none"):
                use = {"type": "tool_use", "id": new_id("toolu"), "name": called.name,
                       "input": _input_for(called.input_schema, said)}
                return self._reply(f"Calling {called.name}.", nodes, blocks=[
                    {"type": "text", "text": f"Calling {called.name}."}, use],
                    stop_reason="tool_use")
        summarized = any(n.role is Role.SUMMARY for n in nodes)
        text = (f"[offline model] I read {len(nodes)} messages"
                + (", one of them a summary of earlier turns" if summarized else "")
                + (f". You said: \u201c{said}\u201d" if said else ".")
                + " (No language model is configured; set ANTHROPIC_API_KEY for real replies.)")
        return self._reply(text, nodes)

    async def stream(self, prompt: Prompt, listener: Listener) -> ModelReply:
        """`complete`'s reply, told as it would be produced: each text word by word (a
        word with the space before it), each tool use when it is whole."""
        answer = await self.complete(prompt)
        blocks = [Text(answer.text)] if answer.blocks is None else [
            ToolUse(b["id"], b["name"], b["input"]) if b["type"] == "tool_use"
            else Text(b["text"]) for b in answer.blocks]
        for index, block in enumerate(blocks):
            if isinstance(block, Text):
                for word in re.findall(r"\s*\S+", block.text):
                    listener(TextDelta(index, word))
                    await asyncio.sleep(0)  # a word at a time, as a model would send it
            listener(BlockClosed(index, block))
        return answer

    def _reply(self, text: str, nodes: Sequence[Node], blocks: list[dict] | None = None,
               stop_reason: str = "end_turn") -> ModelReply:
        prompt_tokens = sum(n.tokens for n in nodes)
        return ModelReply(text, self.model, prompt_tokens, estimate_tokens(text),
                          {"provider": self.name, "model": self.model, "offline": True},
                          blocks=blocks, stop_reason=stop_reason)


def _tool_named(tools: Sequence[Tool], text: str) -> Tool | None:
    words = set(re.findall(r"[A-Za-z0-9_-]+", text))
    return next((t for t in tools if t.name in words), None)


_EMPTY = {"string": None, "number": 0, "integer": 0, "boolean": False, "array": [],
          "object": {}}


def _input_for(schema: Mapping[str, Any], said: str) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    built = {}
    for name in schema.get("required") or []:
        kind = _first_type(properties.get(name))
        built[name] = said if kind == "string" else _EMPTY.get(kind)
    return built


def _first_type(schema: object) -> str:
    """The type a property's schema names first (a schema may be `true`, or list types)."""
    kind = schema.get("type", "string") if isinstance(schema, Mapping) else "string"
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    return kind if isinstance(kind, str) else "string"


def _from_results(call: Node, node: Node) -> str:
    names = {b.id: b.name for b in call.blocks if isinstance(b, ToolUse)}
    lines = []
    for block in node.blocks:
        if isinstance(block, ToolResult):
            first = next((p.text.strip().splitlines()[0] for p in block.content
                          if isinstance(p, Text) and p.text.strip()), "(no text)")
            name = names.get(block.tool_use_id, block.tool_use_id)
            lines.append(f"{name}{' failed' if block.is_error else ''}: {first}")
    return "[offline model] The tools answered. " + "; ".join(lines)
