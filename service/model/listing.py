"""What a session list filters, orders and shows of a session (docs/guides/finding-sessions.md):
the session properties an imported session takes from its source and a native
one from its own writes (tool, tool_version, project, git_branch, models, source_file,
first_activity_at, last_activity_at; docs/data-model.md), the filter and orders of the
list, and a listed session as JSON."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping

from ..errors import BadInput
from . import validate
from .kinds import native

def from_source(source: Mapping[str, Any]) -> dict[str, Any]:
    """An imported session's listed properties, from its `source` (service/transcripts/
    origin.py): the project is the working directory; absent (or empty) facts are left
    out, and one longer than its property holds is cut, so no fact refuses an import."""
    name, path = validate.MAX_NAME_LENGTH, validate.MAX_PATH_LENGTH
    values = {
        "tool": _cut(source.get("tool"), name), "tool_version": _cut(source.get("version"), name),
        "project": _cut(source.get("cwd"), path), "git_branch": _cut(source.get("git_branch"), name),
        "models": list(dict.fromkeys(m[:name] for m in source.get("models") or [] if m)),
        "source_file": _cut(source.get("file"), path),
        "first_activity_at": _time(source.get("first_at")),
        "last_activity_at": _time(source.get("last_at")),
    }
    return {key: value for key, value in values.items() if value is not None}


def _cut(text: str | None, limit: int) -> str | None:
    return text[:limit] if text and text.strip() else None


def _time(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text) if text else None


ORDERS = ("created", "last_activity")  # newest first by either


@dataclass(frozen=True)
class Filter:
    """Which sessions a list keeps; None keeps all. `text` is found in the title, whatever
    its case; `since` and `until` bound the last activity (at or after, before)."""

    tool: str | None = None
    project: str | None = None
    text: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def params(self) -> dict[str, Any]:
        """The statements' parameters (cypher/fragments/session_filter.cypher), validated."""
        text = validate.title(self.text, "text")
        return {
            "tool": validate.optional_name(self.tool, "tool"),
            "project": None if self.project is None else validate.path(self.project, "project"),
            "text": (text or "").strip().lower() or None,
            "since": _utc(self.since, "since"),
            "until": _utc(self.until, "until"),
        }


def _utc(value: datetime | None, what: str) -> datetime | None:
    """As an offset of UTC, as the times are stored: Neo4j orders one instant held with a
    zone name ('UTC') after the same instant held as an offset, so `since` equal to a
    stored time read back (its zone named) would miss it."""
    if value is None:
        return None
    return native(validate.timestamp(value, what)).astimezone(timezone.utc)


def order(value: str) -> str:
    if value not in ORDERS:
        raise BadInput(f"order must be one of {', '.join(ORDERS)}, not {validate.shown(value)}")
    return value


def record(session: Any) -> dict[str, Any]:
    """A listed session as plain JSON: what `ctxdag sessions --json` prints."""
    return {"id": session.id, "title": session.title, "tool": session.tool,
            "tool_version": session.tool_version, "project": session.project,
            "git_branch": session.git_branch, "models": list(session.models),
            "first_activity_at": session.first_activity_at.isoformat(),
            "last_activity_at": session.last_activity_at.isoformat(),
            "source_file": session.source_file, "node_count": session.node_count}
