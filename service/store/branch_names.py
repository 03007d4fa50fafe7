"""Branch names: data about a branch, held by its session's NAMES relationship to the
branch's tip. A name follows its branch as it grows (the first user turn appended after a
named tip takes the name over) and is dropped with the branch; a session gives a name to
one branch at a time (docs/concepts/annotations.md)."""
from __future__ import annotations

from typing import Sequence

from ..model import validate
from .beside import Beside


class BranchNames(Beside):
    async def set(self, tip_id: str, name: str) -> str:
        """Names the branch `tip_id` ends (replacing its name); returns the name."""
        name = validate.branch_name(name)
        return (await self._change("branch_name_set", tip_id, key="tip_id", ids={"name": name},
                                   name=name))["name"]

    async def clear(self, tip_id: str) -> bool:
        """Removes the branch's name; False (nothing written) when it had none."""
        return (await self._change("branch_name_clear", tip_id, key="tip_id"))["cleared"]

    async def get_many(self, node_ids: Sequence[str]) -> dict[str, str]:
        return {row["node_id"]: row["name"]
                for row in await self._read("branch_name_get_many", node_ids)}
