"""Reading nodes. Nodes are immutable once written; deleted ones stay readable, flagged."""
from __future__ import annotations

from typing import Sequence

from ..errors import NotFound
from . import validate
from .db import Database
from .models import Node, node_from_row


class Nodes:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db, self._tenant = db, tenant

    async def get(self, node_id: str) -> Node:
        found = await self.get_many([node_id])
        if not found:
            raise NotFound("node", node_id)
        return found[0]

    async def get_many(self, node_ids: Sequence[str]) -> list[Node]:
        """The nodes that exist, in the order asked; unknown ids are left out."""
        for node_id in node_ids:
            validate.identifier(node_id, "node id")
        rows = await self._db.read("node_get_many", node_ids=list(node_ids), tenant=self._tenant)
        by_id = {row["node"]["id"]: node_from_row(row["node"]) for row in rows}
        return [by_id[i] for i in node_ids if i in by_id]

    async def children(self, node_id: str) -> list[Node]:
        await self.get(node_id)
        return (await self.children_many([node_id]))[node_id]

    async def children_many(self, node_ids: Sequence[str]) -> dict[str, list[Node]]:
        """Live children of each node, in seq order (empty for unknown ids)."""
        for node_id in node_ids:
            validate.identifier(node_id, "node id")
        rows = await self._db.read("node_children_many", node_ids=list(node_ids),
                                   tenant=self._tenant)
        children: dict[str, list[Node]] = {node_id: [] for node_id in node_ids}
        for row in rows:
            children[row["parent_id"]].append(node_from_row(row["node"]))
        return children
