"""Runs the render statement. The rule itself is documented in service/context/render.py."""
from __future__ import annotations

from ..errors import NotFound
from . import validate
from .db import Database, Rows
from .models import Rendered, node_from_row
from .problems import raise_for_problem


class Views:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db, self._tenant = db, tenant

    async def render(self, session_id: str, head_id: str | None = None) -> Rendered:
        validate.identifier(session_id, "session id")
        validate.optional_identifier(head_id, "head id")
        rows: Rows = await self._db.read("render_context", session_id=session_id,
                                         tenant=self._tenant, head_id=head_id)
        if not rows:
            raise NotFound("session", session_id)
        row = rows[0]
        raise_for_problem(row["problem"], {"session_id": session_id, "node_id": head_id})
        return Rendered(row["head_id"], tuple(node_from_row(n) for n in row["nodes"]),
                        row["summary_id"], row["active_summary_id"])
