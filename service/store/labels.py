"""Labels on nodes: data about a node, held by its session's LABELED relationship (the
node itself never changes, README "What the model reads, and compaction")."""
from __future__ import annotations

from typing import Sequence

from ..errors import NotFound
from . import validate
from .db import Database
from .events import Events
from .ids import utcnow
from .problems import raise_for_problem


class Labels:
    def __init__(self, db: Database, tenant: str, events: Events) -> None:
        self._db, self._tenant, self._events = db, tenant, events

    async def set(self, node_id: str, text: str) -> str:
        """Labels the node (replacing its label); returns the label."""
        validate.identifier(node_id, "node id")
        text = validate.label(text)
        rows = await self._db.write("label_set", self._check(node_id), node_id=node_id,
                                    tenant=self._tenant, text=text, now=utcnow())
        await self._events.committed(rows[0]["session_id"], rows[0]["events"])
        return rows[0]["label"]

    async def clear(self, node_id: str) -> bool:
        """Removes the node's label; False (nothing written) when it had none."""
        validate.identifier(node_id, "node id")
        rows = await self._db.write("label_clear", self._check(node_id), node_id=node_id,
                                    tenant=self._tenant, now=utcnow())
        await self._events.committed(rows[0]["session_id"], rows[0]["events"])
        return rows[0]["cleared"]

    async def get_many(self, node_ids: Sequence[str]) -> dict[str, str]:
        for node_id in node_ids:
            validate.identifier(node_id, "node id")
        rows = await self._db.read("label_get_many", node_ids=list(node_ids),
                                   tenant=self._tenant)
        return {row["node_id"]: row["label"] for row in rows}

    @staticmethod
    def _check(node_id: str):
        def check(rows) -> None:
            if not rows:
                raise NotFound("node", node_id)
            raise_for_problem(rows[0]["problem"], {"node_id": node_id})

        return check
