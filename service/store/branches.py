"""Branch listing: every live user-branch tip, its length, and where HEAD is."""
from __future__ import annotations

from typing import Sequence

from ..errors import NotFound
from . import validate
from .db import Database
from .models import Branch, node_from_row


class Branches:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db, self._tenant = db, tenant

    async def list(self, session_id: str) -> list[Branch]:
        branches = (await self.list_many([session_id]))[session_id]
        if not branches:
            # Every session has at least one branch (ROOT alone is one), so none
            # means no session of this tenant.
            raise NotFound("session", session_id)
        return branches

    async def list_many(self, session_ids: Sequence[str]) -> dict[str, list[Branch]]:
        for session_id in session_ids:
            validate.identifier(session_id, "session id")
        rows = await self._db.read("branch_list", session_ids=list(session_ids),
                                   tenant=self._tenant)
        branches: dict[str, list[Branch]] = {session_id: [] for session_id in session_ids}
        for r in rows:
            branches[r["session_id"]].append(
                Branch(node_from_row(r["tip"]), r["length"], r["is_head"], r["holds_head"]))
        return branches
