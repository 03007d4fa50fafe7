"""The sessions list: its filter, its order, and the field that serves them (README,
"Finding sessions")."""
from __future__ import annotations

from datetime import datetime
from enum import Enum
from typing import Optional

import strawberry
from strawberry.types import Info

from ..model import listing
from .types import SessionConnection, connection_out, session_out


@strawberry.enum(description="How a sessions list is ordered: newest first, by either time.")
class SessionOrder(Enum):
    CREATED = "created"
    LAST_ACTIVITY = "last_activity"


@strawberry.input(description=(
    "Which sessions a list keeps; a field left out keeps all. An imported session's tool "
    "and project are its file's (claude-code, pi or codex; the working directory), a native "
    "one has no tool and the project it was created with."))
class SessionFilter:
    tool: Optional[str] = strawberry.field(default=None, description="The tool, exactly.")
    project: Optional[str] = strawberry.field(default=None, description=(
        "The project (working directory), exactly."))
    text: Optional[str] = strawberry.field(default=None, description=(
        "Text the title holds, whatever its case (a substring, not words)."))
    since: Optional[datetime] = strawberry.field(default=None, description=(
        "Last active at or after this time."))
    until: Optional[datetime] = strawberry.field(default=None, description=(
        "Last active before this time."))


def keep_of(chosen: Optional[SessionFilter]) -> listing.Filter:
    if chosen is None:
        return listing.Filter()
    return listing.Filter(tool=chosen.tool, project=chosen.project, text=chosen.text,
                          since=chosen.since, until=chosen.until)


async def sessions_field(info: Info, keep: Optional[SessionFilter], order: SessionOrder,
                         first: Optional[int], after: Optional[str], last: Optional[int],
                         before: Optional[str]) -> SessionConnection:
    sessions = info.context.services.ledger.sessions
    kept = keep_of(keep)
    page = await sessions.list(first=first, after=after, last=last, before=before, keep=kept,
                               order=order.value)
    for item in page.items:
        info.context.loaders.sessions.prime(item.id, item)
    return connection_out(page, session_out, count=lambda: sessions.count(kept))
