"""Branch listing: every live user-branch tip, its length, and where HEAD is."""
from __future__ import annotations

from ..errors import NotFound
from . import validate
from .db import Database
from .models import Branch, node_from_row


class Branches:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db, self._tenant = db, tenant

    async def list(self, session_id: str) -> list[Branch]:
        validate.identifier(session_id, "session id")
        rows = await self._db.read("branch_list", session_id=session_id, tenant=self._tenant)
        if not rows:
            # Every session has at least one branch (ROOT alone is one), so no rows
            # means no session of this tenant.
            raise NotFound("session", session_id)
        return [
            Branch(node_from_row(r["tip"]), r["length"], r["is_head"], r["holds_head"])
            for r in rows
        ]
