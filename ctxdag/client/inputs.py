"""The client's plain arguments as a generated package's input types (aio and sync each
have their own classes of the same shape, so the package is a parameter)."""
from __future__ import annotations

from types import ModuleType
from typing import Any, Iterable

from .tools import Tool, ToolResult

CHOICE_MODES = ("auto", "any", "none")


def tool_inputs(inputs: ModuleType, tools: Iterable[Tool] | None) -> Any:
    if tools is None:
        return None
    return [inputs.ToolInput(name=t.name, input_schema=t.input_schema,
                             description=t.description) for t in tools]


def tool_choice(inputs: ModuleType, enums: ModuleType, choice: str | None) -> Any:
    """"auto", "any", "none", or a tool's name (the model must call that one)."""
    if choice is None:
        return None
    if choice.lower() in CHOICE_MODES:
        return inputs.ToolChoiceInput(mode=enums.ToolChoiceMode(choice.upper()))
    return inputs.ToolChoiceInput(mode=enums.ToolChoiceMode.TOOL, name=choice)


def result_inputs(inputs: ModuleType, results: Iterable[ToolResult]) -> list[Any]:
    return [inputs.ToolResultBlockInput(tool_use_id=r.tool_use_id, content=r.content,
                                        is_error=r.is_error) for r in results]


def reply_blocks(inputs: ModuleType, blocks: Iterable[Any] | None) -> Any:
    """A reply's content blocks as the Anthropic API returns them (dicts, or the SDK's block
    objects): text, thinking, redacted_thinking and tool_use, as ContentBlockInput."""
    if blocks is None:
        return None
    made = []
    for block in blocks:
        b = block.model_dump() if hasattr(block, "model_dump") else dict(block)
        kind = b.get("type")
        if kind == "text":
            made.append(inputs.ContentBlockInput(text=inputs.TextBlockInput(text=b["text"])))
        elif kind == "thinking":
            made.append(inputs.ContentBlockInput(thinking=inputs.ThinkingBlockInput(
                thinking=b["thinking"], signature=b["signature"])))
        elif kind == "redacted_thinking":
            made.append(inputs.ContentBlockInput(
                redacted_thinking=inputs.RedactedThinkingBlockInput(data=b["data"])))
        elif kind == "tool_use":
            made.append(inputs.ContentBlockInput(tool_use=inputs.ToolUseBlockInput(
                id=b["id"], name=b["name"], input=b["input"])))
        else:
            raise ValueError(f"a reply block of type {kind!r} is not one the ledger stores "
                             "(text, thinking, redacted_thinking, tool_use)")
    return made


USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
              "cache_read_input_tokens")


def usage_input(inputs: ModuleType, usage: Any) -> Any:
    """A provider's usage (a dict, or the SDK's Usage object) as UsageInput."""
    if usage is None:
        return None
    given = usage.model_dump() if hasattr(usage, "model_dump") else dict(usage)
    return inputs.UsageInput(**{k: given[k] for k in USAGE_KEYS if given.get(k) is not None})


def failure_input(inputs: ModuleType, enums: ModuleType, error: str | None, code: str) -> Any:
    if error is None:
        return None
    return inputs.ModelFailureInput(message=error, code=enums.ModelErrorCode(code))


def session_filter(inputs: ModuleType, **fields: Any) -> Any:
    given = {name: value for name, value in fields.items() if value is not None}
    return inputs.SessionFilter(**given) if given else None


def endpoint(url: str) -> str:
    """The GraphQL endpoint of a service's address (or the endpoint itself)."""
    url = url.rstrip("/")
    return url if url.endswith("/graphql") else f"{url}/graphql"


def auth_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}
