"""Pins on nodes: data about a node, held by its session's PINNED relationship (the node
itself never changes). A pinned turn inside the segment of the summary a head renders is
rendered right after the summary (service/context/render.py); what pins may hold is the
budget's to say (service/context/budget.py)."""
from __future__ import annotations

from typing import Sequence

from .beside import Beside


class Pins(Beside):
    async def set(self, node_id: str, max_pinned_tokens: int) -> bool:
        """Pins the node; False (nothing written) when it was pinned already. Refused when
        ROOT and the pinned nodes (with the other halves of their tool pairs) would hold
        more than `max_pinned_tokens`."""
        row = await self._change("pin_set", node_id, ids={"max_pinned_tokens": max_pinned_tokens},
                                 max_pinned_tokens=max_pinned_tokens)
        return bool(row["events"])

    async def clear(self, node_id: str) -> bool:
        """Unpins the node; False (nothing written) when it was not pinned."""
        return (await self._change("pin_clear", node_id))["cleared"]

    async def get_many(self, node_ids: Sequence[str]) -> dict[str, bool]:
        pinned = {row["node_id"] for row in await self._read("pin_get_many", node_ids)}
        return {node_id: node_id in pinned for node_id in node_ids}
