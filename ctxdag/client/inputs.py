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


def session_filter(inputs: ModuleType, **fields: Any) -> Any:
    given = {name: value for name, value in fields.items() if value is not None}
    return inputs.SessionFilter(**given) if given else None


def endpoint(url: str) -> str:
    """The GraphQL endpoint of a service's address (or the endpoint itself)."""
    url = url.rstrip("/")
    return url if url.endswith("/graphql") else f"{url}/graphql"


def auth_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}
