"""Tool sets as session data (docs/guides/tool-sets.md): each setTools is a new version of a
session's tool set, its definitions stored once per tenant and content hash (the ToolSet
calls are OFFERED). A version anchored at a node is a branch's: the set in force at a node
is the latest version that is the session's (no anchor) or anchored on the node's chain."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping, Sequence

from ..model import validate
from ..model.ids import utcnow
from ..model.kinds import native
from .db import Database
from .problems import single_row


@dataclass(frozen=True)
class ToolSetVersion:
    session_id: str
    version: int  # 1 for the session's first setTools, then one more each
    anchor_id: str | None  # the node whose chain it applies to; None: the whole session
    tools_sha256: str | None  # None: no tools (a version that clears them)
    tools: tuple[Mapping[str, Any], ...]  # the neutral definitions {name, description, input_schema}
    tool_choice: Mapping[str, Any] | None  # {mode, name} as given, or None
    created_at: datetime


def version_from_row(row: Mapping[str, Any]) -> ToolSetVersion:
    return ToolSetVersion(
        session_id=row["session_id"], version=row["version"], anchor_id=row.get("anchor_id"),
        tools_sha256=row.get("tools_sha256"),
        tools=tuple(json.loads(row["tools"])) if row.get("tools") else (),
        tool_choice=json.loads(row["tool_choice"]) if row.get("tool_choice") else None,
        created_at=native(row["created_at"]))


class ToolSets:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db, self._tenant = db, tenant

    async def set(self, session_id: str, tools_json: str | None,
                  tool_choice: Mapping[str, Any] | None = None,
                  anchor_id: str | None = None) -> ToolSetVersion:
        """A new version: `tools_json` the canonical definitions (models.tools_json, checked
        by the caller), `tool_choice` {mode, name}; `anchor_id` makes it a branch's."""
        validate.identifier(session_id, "session id")
        validate.optional_identifier(anchor_id, "head id")
        digest = (None if tools_json is None
                  else hashlib.sha256(tools_json.encode("utf-8")).hexdigest())
        choice = None if tool_choice is None else json.dumps(dict(tool_choice), sort_keys=True)
        rows = await self._db.write(
            "tool_set_put", single_row(session_id, {"node_id": anchor_id}),
            session_id=session_id, tenant=self._tenant, tools=tools_json, tools_sha256=digest,
            tool_choice=choice, anchor_id=anchor_id, now=utcnow())
        return version_from_row(rows[0]["version"])

    async def in_force(self, session_id: str, head_id: str | None = None
                       ) -> ToolSetVersion | None:
        """The version a call at `head_id` (default: HEAD) is offered; None when the session
        has none that applies. Read on the leader: a setTools just made decides the call."""
        validate.identifier(session_id, "session id")
        validate.optional_identifier(head_id, "head id")
        rows = await self._db.read_on_leader("tool_set_in_force", session_id=session_id,
                                             tenant=self._tenant, head_id=head_id)
        single_row(session_id, {})(rows)
        return None if rows[0]["version"] is None else version_from_row(rows[0]["version"])

    async def histories(self, session_ids: Sequence[str]) -> dict[str, list[ToolSetVersion]]:
        """Each session's versions, oldest first (an unknown session: none)."""
        for session_id in session_ids:
            validate.identifier(session_id, "session id")
        rows = await self._db.read("tool_set_history", session_ids=list(session_ids),
                                   tenant=self._tenant)
        found = {row["session_id"]: [version_from_row(v) for v in row["versions"]]
                 for row in rows}
        return {i: found.get(i, []) for i in session_ids}
