"""Data held beside a node: one of its session's relationships to it (a label, a pin, a
branch name), so the node itself never changes. Each change is one statement that locks
the session, reports a problem or writes, and announces its events; reads take many nodes
at once."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import NotFound
from ..model import validate
from .db import Database, Rows
from .events import Events
from ..model.ids import utcnow
from .problems import raise_for_problem


class Beside:
    def __init__(self, db: Database, tenant: str, events: Events) -> None:
        self._db, self._tenant, self._events = db, tenant, events

    async def _change(self, statement: str, node_id: str, *, key: str = "node_id",
                      ids: Mapping[str, Any] | None = None, **params: Any) -> Mapping[str, Any]:
        """Runs `statement` on the node `node_id` (its parameter `key`) and announces what it
        wrote; its row. NOT_FOUND when no node of the tenant has the id; a problem the
        statement reports is raised with `ids` (and the row) to word it."""
        validate.identifier(node_id, key.replace("_", " "))
        rows = await self._db.write(statement, _check(node_id, {key: node_id, **(ids or {})}),
                                    tenant=self._tenant, now=utcnow(), **{key: node_id},
                                    **params)
        await self._events.committed(rows[0]["session_id"], rows[0]["events"])
        return rows[0]

    async def _read(self, statement: str, node_ids: Sequence[str]) -> Rows:
        for node_id in node_ids:
            validate.identifier(node_id, "node id")
        return await self._db.read(statement, node_ids=list(node_ids), tenant=self._tenant)


def _check(node_id: str, ids: Mapping[str, Any]):
    def check(rows: Rows) -> None:
        if not rows:
            raise NotFound("node", node_id)
        raise_for_problem(rows[0]["problem"], {**rows[0], "node_id": node_id, **ids})

    return check
