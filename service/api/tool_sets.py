"""The session's tool set as GraphQL shows it (docs/guides/tool-sets.md)."""
from __future__ import annotations

from datetime import datetime
from typing import Optional

import strawberry
from strawberry.scalars import JSON

from .. import store


@strawberry.type(name="ToolSet", description=(
    "A version of a session's tool set (setTools): what its calls are offered unless a "
    "call names its own tools."))
class ToolSetVersion:
    version: int = strawberry.field(description="1 for the session's first setTools, then "
                                                "one more each.")
    head_id: Optional[strawberry.ID] = strawberry.field(description=(
        "A branch's set: it applies at this node and every node after it on its chain; null: "
        "the whole session's."))
    tools: JSON = strawberry.field(description=(
        "The definitions {name, description, input_schema}, as calls are offered them."))
    tool_choice: Optional[JSON] = strawberry.field(description="{mode, name}, or null.")
    sha256: Optional[str] = strawberry.field(description=(
        "The definitions' content hash, as a call offered them names it; null: no tools."))
    created_at: datetime


def tool_set_out(v: store.ToolSetVersion) -> ToolSetVersion:
    return ToolSetVersion(version=v.version, head_id=v.anchor_id, tools=[dict(t) for t in v.tools],
                          tool_choice=None if v.tool_choice is None else dict(v.tool_choice),
                          sha256=v.tools_sha256, created_at=v.created_at)
