"""Tools as the agent loop sees them: a definition offered to the model and the caller's
function that answers it."""
from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Tool:
    """`function` is called with the tool use's input as keyword arguments; what it returns
    (a string, or anything JSON can write) is the result, and an exception it raises is
    an error result carrying its message. It may be a coroutine function under AsyncClient."""

    name: str
    input_schema: dict[str, Any]
    function: Callable[..., Any] | None = None
    description: str | None = None


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    content: str
    is_error: bool = False


def tool_uses(message: Any) -> list[Any]:
    """The tool-use blocks of a message (a Turn's reply), in order."""
    if message is None:
        return []
    return [block for block in message.blocks if block.typename__ == "ToolUseBlock"]


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def call_tool(tools: dict[str, Tool], use: Any) -> tuple[Any, str | None]:
    """Starts the tool's function on a tool use: (its return value, which may be awaitable,
    and None) or (None, the error text) when it raised or there is no such tool."""
    tool = tools.get(use.name)
    if tool is None or tool.function is None:
        return None, f"no tool named {use.name!r} is offered"
    try:
        return tool.function(**(use.input or {})), None
    except Exception as e:  # noqa: BLE001 - any failure is the model's to read
        return None, failure_text(e)


def failure_text(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"


async def settled(value: Any) -> tuple[Any, str | None]:
    """A coroutine function's result, awaited: (its value, None) or (None, the error text)."""
    if not inspect.isawaitable(value):
        return value, None
    try:
        return await value, None
    except Exception as e:  # noqa: BLE001 - any failure is the model's to read
        return None, failure_text(e)
