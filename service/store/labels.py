"""Labels on nodes: data about a node, held by its session's LABELED relationship (the
node itself never changes, docs/concepts/what-the-model-reads.md)."""
from __future__ import annotations

from typing import Sequence

from ..model import validate
from .beside import Beside


class Labels(Beside):
    async def set(self, node_id: str, text: str) -> str:
        """Labels the node (replacing its label); returns the label."""
        text = validate.label(text)
        return (await self._change("label_set", node_id, text=text))["label"]

    async def clear(self, node_id: str) -> bool:
        """Removes the node's label; False (nothing written) when it had none."""
        return (await self._change("label_clear", node_id))["cleared"]

    async def get_many(self, node_ids: Sequence[str]) -> dict[str, str]:
        return {row["node_id"]: row["label"]
                for row in await self._read("label_get_many", node_ids)}
