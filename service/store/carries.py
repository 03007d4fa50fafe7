"""Carry nodes (docs/concepts/annotations.md): which turns a carry-over would summarize, and
the provenance of those written — the turns each one stands for, and the carry nodes
standing for a turn. The write itself moves HEAD and lives in head.py."""
from __future__ import annotations

from typing import Sequence

from ..model import validate
from .batch import grouped
from .db import Database
from ..model.models import Node, node_from_row
from .problems import single_row


class Carries:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db, self._tenant = db, tenant

    async def segment(self, session_id: str, from_id: str, into_id: str) -> tuple[Node, ...]:
        """`from_id`'s chain below its common ancestor with `into_id`'s, in chain order:
        what a carry-over from the one into the other summarizes. BadInput when there is
        nothing (`from_id` lies on `into_id`'s chain) or an id names no live turn of the
        session."""
        ids = {"session_id": validate.identifier(session_id, "session id"),
               "from_id": validate.identifier(from_id, "fromTip"),
               "into_id": validate.identifier(into_id, "intoHead")}
        rows = await self._db.read("carry_segment", tenant=self._tenant, **ids)
        single_row(session_id, ids)(rows)
        return tuple(node_from_row(n) for n in rows[0]["nodes"])

    async def carried_many(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        """The turns each carry node summarizes, in chain order ([] for any other node)."""
        return await grouped(self._db, "carried_many", node_ids, param="node_ids",
                             what="node", group="node_id", build=lambda r: r["carried_id"],
                             tenant=self._tenant)

    async def carriers_many(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        """The carry nodes summarizing each node, newest first."""
        return await grouped(self._db, "carriers_many", node_ids, param="node_ids",
                             what="node", group="node_id", build=lambda r: r["carrier_id"],
                             tenant=self._tenant)
