"""Is a request body one the provider would take? Checked two independent ways.

1. Shape: the providers' own SDK request types (`anthropic`'s MessageCreateParams,
   `openai`'s chat CompletionCreateParams), validated strictly with pydantic; a body
   whose validated form differs from it carried a key or a type the SDK does not know.
2. Rules the types cannot express, restated here from the providers' documentation
   (not from the product's code): Anthropic's messages alternate and open with the
   user's; the message after an assistant's `tool_use` blocks is a user message whose
   leading `tool_result` blocks answer every one of them, and no `tool_result` answers
   anything else; tool_use ids are unique in a request. OpenAI's assistant `tool_calls`
   are each answered by a `tool` message before the next non-tool message, and a tool
   message answers a call just made.
"""
from __future__ import annotations

import collections.abc
import json
from functools import lru_cache
from typing import Any


@lru_cache(maxsize=None)
def _adapter(kind: str):
    from pydantic import TypeAdapter

    if kind == "anthropic":
        from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

        return TypeAdapter(MessageCreateParamsNonStreaming)
    if kind == "anthropic-stream":
        from anthropic.types.message_create_params import MessageCreateParamsStreaming

        return TypeAdapter(MessageCreateParamsStreaming)
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    return TypeAdapter(CompletionCreateParamsNonStreaming)


def _solid(value: Any) -> Any:
    """The validated value with the SDK's lazily validated iterables run to the end."""
    if isinstance(value, dict):
        return {k: _solid(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, bytes, int, float, bool)):
        return value
    if isinstance(value, collections.abc.Iterable):
        return [_solid(v) for v in value]
    return value


def _shape(kind: str, body: dict[str, Any]) -> None:
    full = {"model": "m", "max_tokens": 1024, **body} if kind.startswith("anthropic") else {
        "model": "m", **body}
    validated = _solid(_adapter(kind).validate_python(full, strict=True))
    assert validated == full, (
        f"the {kind} SDK's types do not take this body as it is:\n"
        f"sent      {json.dumps(full, sort_keys=True)[:2000]}\n"
        f"validated {json.dumps(validated, sort_keys=True, default=str)[:2000]}")


def problems_anthropic(body: dict[str, Any]) -> list[str]:
    """What breaks the Messages API's rules in `body` (empty: nothing)."""
    found: list[str] = []
    messages = body["messages"]
    if not messages or messages[0]["role"] != "user":
        found.append("the first message is not the user's")
    seen_uses: set[str] = set()
    for i, message in enumerate(messages):
        if i and messages[i - 1]["role"] == message["role"]:
            found.append(f"messages {i - 1} and {i} are both {message['role']}'s")
        content = message["content"]
        blocks = [] if isinstance(content, str) else list(content)
        uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
        for use in uses:
            if use in seen_uses:
                found.append(f"message {i}: tool_use id {use} used twice")
            seen_uses.add(use)
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        leading = 0
        while leading < len(blocks) and blocks[leading]["type"] == "tool_result":
            leading += 1
        if len(results) != leading:
            found.append(f"message {i}: tool_result blocks after other content")
        previous = messages[i - 1] if i else None
        opened = ([] if previous is None or isinstance(previous["content"], str) else
                  [b["id"] for b in previous["content"] if b["type"] == "tool_use"])
        if sorted(results) != sorted(opened):
            found.append(f"message {i}: answers {sorted(results)}, the message before "
                         f"opened {sorted(opened)}")
    if messages and not isinstance(messages[-1]["content"], str) and any(
            b["type"] == "tool_use" for b in messages[-1]["content"]):
        found.append("the last message leaves tool uses unanswered")
    return found


def problems_openai(body: dict[str, Any]) -> list[str]:
    found: list[str] = []
    waiting: list[str] = []
    seen: set[str] = set()
    for i, message in enumerate(body["messages"]):
        if message["role"] == "tool":
            if message["tool_call_id"] not in waiting:
                found.append(f"message {i}: tool message answers {message['tool_call_id']}, "
                             "which no preceding call left waiting")
            else:
                waiting.remove(message["tool_call_id"])
            continue
        if waiting:
            found.append(f"message {i}: {message['role']} message while calls {waiting} wait")
            waiting = []
        for call in message.get("tool_calls") or []:
            if call["id"] in seen:
                found.append(f"message {i}: tool call id {call['id']} used twice")
            seen.add(call["id"])
            waiting.append(call["id"])
            json.loads(call["function"]["arguments"])
    if waiting:
        found.append(f"calls {waiting} are never answered")
    return found


def assert_valid_anthropic(body: dict[str, Any]) -> None:
    _shape("anthropic", body)
    assert not problems_anthropic(body), problems_anthropic(body)


def assert_valid_anthropic_stream(body: dict[str, Any]) -> None:
    """A streamed request (`messages.stream`): `"stream": true`, the SDK's streaming type."""
    assert body.get("stream") is True, body.get("stream")
    _shape("anthropic-stream", body)
    assert not problems_anthropic(body), problems_anthropic(body)


def assert_valid_openai(body: dict[str, Any]) -> None:
    _shape("openai", body)
    assert not problems_openai(body), problems_openai(body)


def uncached(body: dict[str, Any]) -> dict[str, Any]:
    """`body` without its cache breakpoints, as the request was before they existed: no
    `cache_control`, the system prompt one string, a message of text alone one string."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    plain = strip(body)
    if isinstance(plain.get("system"), list):
        plain["system"] = "\n\n".join(b["text"] for b in plain["system"])
    for message in plain.get("messages") or []:
        content = message["content"]
        if isinstance(content, list) and all(b["type"] == "text" for b in content):
            message["content"] = "\n\n".join(b["text"] for b in content)
    return plain


def breakpoints(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """Where an Anthropic request carries cache_control, in request order: ("tools", i),
    ("system", i) or ("message", (i, j)) with the mark."""
    found: list[tuple[str, Any]] = []
    for i, tool in enumerate(body.get("tools") or []):
        if "cache_control" in tool:
            found.append(("tools", i, tool["cache_control"]))
    system = body.get("system")
    for i, block in enumerate(system if isinstance(system, list) else []):
        if "cache_control" in block:
            found.append(("system", i, block["cache_control"]))
    for i, message in enumerate(body["messages"]):
        content = message["content"]
        for j, block in enumerate(content if isinstance(content, list) else []):
            if "cache_control" in block:
                found.append(("message", (i, j), block["cache_control"]))
    return found
