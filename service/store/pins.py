"""Pins on nodes: data about a node, held by its session's PINNED relationship (the node
itself never changes). A pinned turn inside the segment of the summary a head renders is
rendered right after the summary (service/context/render.py); what pins may hold is the
budget's to say (service/context/budget.py)."""
from __future__ import annotations

from typing import Sequence

from ..errors import NotFound
from . import validate
from .db import Database
from .events import Events
from .ids import utcnow
from .problems import raise_for_problem


class Pins:
    def __init__(self, db: Database, tenant: str, events: Events) -> None:
        self._db, self._tenant, self._events = db, tenant, events

    async def set(self, node_id: str, max_pinned_tokens: int) -> bool:
        """Pins the node; False (nothing written) when it was pinned already. Refused when
        ROOT and the pinned nodes (with the other halves of their tool pairs) would hold
        more than `max_pinned_tokens`."""
        validate.identifier(node_id, "node id")
        rows = await self._db.write(
            "pin_set", self._check(node_id, max_pinned_tokens=max_pinned_tokens),
            node_id=node_id, tenant=self._tenant, now=utcnow(),
            max_pinned_tokens=max_pinned_tokens)
        await self._events.committed(rows[0]["session_id"], rows[0]["events"])
        return bool(rows[0]["events"])

    async def clear(self, node_id: str) -> bool:
        """Unpins the node; False (nothing written) when it was not pinned."""
        validate.identifier(node_id, "node id")
        rows = await self._db.write("pin_clear", self._check(node_id), node_id=node_id,
                                    tenant=self._tenant, now=utcnow())
        await self._events.committed(rows[0]["session_id"], rows[0]["events"])
        return rows[0]["cleared"]

    async def get_many(self, node_ids: Sequence[str]) -> dict[str, bool]:
        for node_id in node_ids:
            validate.identifier(node_id, "node id")
        rows = await self._db.read("pin_get_many", node_ids=list(node_ids),
                                   tenant=self._tenant)
        pinned = {row["node_id"] for row in rows}
        return {node_id: node_id in pinned for node_id in node_ids}

    @staticmethod
    def _check(node_id: str, **ids):
        def check(rows) -> None:
            if not rows:
                raise NotFound("node", node_id)
            raise_for_problem(rows[0]["problem"], {**rows[0], **ids, "node_id": node_id})

        return check
