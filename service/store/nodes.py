"""Reading nodes. Nodes are immutable once written; deleted ones stay readable, flagged."""
from __future__ import annotations

from typing import Sequence

from .batch import by_ids, grouped, the_one
from .db import Database
from ..model.models import Node, node_from_row


class Nodes:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db, self._tenant = db, tenant

    async def get(self, node_id: str) -> Node:
        return the_one(await self.get_many([node_id]), "node", node_id)

    async def get_many(self, node_ids: Sequence[str]) -> list[Node]:
        """The nodes that exist, in the order asked; unknown ids are left out."""
        return await by_ids(self._db, "node_get_many", node_ids, param="node_ids", what="node",
                            build=lambda r: node_from_row(r["node"]), key=lambda n: n.id,
                            tenant=self._tenant)

    async def children(self, node_id: str) -> list[Node]:
        await self.get(node_id)
        return (await self.children_many([node_id]))[node_id]

    async def children_many(self, node_ids: Sequence[str]) -> dict[str, list[Node]]:
        """Live children of each node, in seq order (empty for unknown ids)."""
        return await grouped(self._db, "node_children_many", node_ids, param="node_ids",
                             what="node", group="parent_id",
                             build=lambda r: node_from_row(r["node"]), tenant=self._tenant)

    async def media_of(self, nodes: Sequence[Node]) -> dict[str, str]:
        """The base64 data of every medium the nodes' blocks name (a prompt's), by hash;
        no read when they name none."""
        return await self.media(list(dict.fromkeys(
            digest for node in nodes for digest in node.media_hashes)))

    async def media(self, hashes: Sequence[str]) -> dict[str, str]:
        """The base64 data of stored media by hash (the tenant's; unknown ones left out)."""
        if not hashes:
            return {}
        rows = await self._db.read("media_get_many", hashes=list(hashes), tenant=self._tenant)
        return {row["sha256"]: row["data"] for row in rows}
