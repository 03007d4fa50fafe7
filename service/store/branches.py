"""Branch listing: every live user-branch tip, its length, where HEAD is, and the summary
the tip renders."""
from __future__ import annotations

from typing import Sequence

from ..errors import NotFound
from .batch import grouped
from .db import Database
from ..model.models import Branch, node_from_row


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
        return await grouped(
            self._db, "branch_list", session_ids, param="session_ids", what="session",
            group="session_id", tenant=self._tenant,
            build=lambda r: Branch(node_from_row(r["tip"]), r["length"], r["is_head"],
                                   r["holds_head"], r["summary_id"], r["name"],
                                   tuple(r["stand_in_ids"]) or (
                                       (r["summary_id"],) if r["summary_id"] else ())))
