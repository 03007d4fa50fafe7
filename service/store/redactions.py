"""Redaction (docs/guides/redaction.md): erasing a node's content for good while its place in
the ledger — id, role, edges, the calls that read it, the summaries covering it — stays.
What a redacted node holds is model/redaction.py's; the write is one statement that
checks and writes (cypher/node_redact.cypher)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..model import validate
from ..model.models import Node, node_from_row
from ..model.redaction import erasure
from .batch import grouped
from .beside import Beside
from .nodes import Nodes


@dataclass(frozen=True)
class Redacted:
    node: Node  # as redacted
    # The summaries and carry nodes that may quote what was erased, newest first.
    quoting_ids: tuple[str, ...]
    erased_media: tuple[str, ...]  # hashes of the media deleted with it (no other carrier)


class Redactions(Beside):
    async def redact(self, node_id: str, reason: str) -> Redacted:
        """Erases the node's content; NOT_FOUND for no node of the tenant, BAD_INPUT for a
        blank reason, CONFLICT when it was redacted already. Cannot be undone."""
        reason = validate.redaction_reason(reason)
        node = await Nodes(self._db, self._tenant).get(validate.identifier(node_id, "node id"))
        erased = erasure(node.blocks)
        written = {key: erased.params[key] for key in ("content", "thinking", "tokens", "blocks")}
        row = await self._change("node_redact", node_id, reason=reason,
                                 redacted_media=erased.media_json, **written)
        return Redacted(node_from_row(row["node"]), tuple(row["summary_ids"]),
                        tuple(row["erased_media"]))

    async def quoting_many(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        """For each redacted node, the summaries and carry nodes that may quote it, newest
        first ([] for a node that is not redacted)."""
        return await grouped(self._db, "redaction_quoters_many", node_ids, param="node_ids",
                             what="node", group="node_id", build=lambda r: r["quoting_id"],
                             tenant=self._tenant)

    async def quoted_many(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        """For each summary or carry node, the redacted nodes it stands in for (it may
        quote them), in seq order ([] for any other node)."""
        return await grouped(self._db, "redaction_quoted_many", node_ids, param="node_ids",
                             what="node", group="quoting_id", build=lambda r: r["node_id"],
                             tenant=self._tenant)
