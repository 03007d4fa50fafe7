"""Branch names: data about a branch, held by its session's NAMES relationship to the
branch's tip. A name follows its branch as it grows (the first user turn appended after a
named tip takes the name over) and is dropped with the branch; a session gives a name to
one branch at a time (README "The ledger", "Branch names")."""
from __future__ import annotations

from typing import Sequence

from ..errors import NotFound
from . import validate
from .db import Database
from .events import Events
from .ids import utcnow
from .problems import raise_for_problem


class BranchNames:
    def __init__(self, db: Database, tenant: str, events: Events) -> None:
        self._db, self._tenant, self._events = db, tenant, events

    async def set(self, tip_id: str, name: str) -> str:
        """Names the branch `tip_id` ends (replacing its name); returns the name."""
        validate.identifier(tip_id, "tip id")
        name = validate.branch_name(name)
        rows = await self._db.write("branch_name_set", self._check(tip_id, name), tip_id=tip_id,
                                    tenant=self._tenant, name=name, now=utcnow())
        await self._events.committed(rows[0]["session_id"], rows[0]["events"])
        return rows[0]["name"]

    async def clear(self, tip_id: str) -> bool:
        """Removes the branch's name; False (nothing written) when it had none."""
        validate.identifier(tip_id, "tip id")
        rows = await self._db.write("branch_name_clear", self._check(tip_id), tip_id=tip_id,
                                    tenant=self._tenant, now=utcnow())
        await self._events.committed(rows[0]["session_id"], rows[0]["events"])
        return rows[0]["cleared"]

    async def get_many(self, node_ids: Sequence[str]) -> dict[str, str]:
        for node_id in node_ids:
            validate.identifier(node_id, "node id")
        rows = await self._db.read("branch_name_get_many", node_ids=list(node_ids),
                                   tenant=self._tenant)
        return {row["node_id"]: row["name"] for row in rows}

    @staticmethod
    def _check(tip_id: str, name: str | None = None):
        def check(rows) -> None:
            if not rows:
                raise NotFound("node", tip_id)
            raise_for_problem(rows[0]["problem"], {"tip_id": tip_id, "node_id": tip_id, "name": name})

        return check
