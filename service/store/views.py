"""Runs the render and graph statements. The rule itself is documented in
service/context/render.py; the capsule contract in cypher/session_graph.cypher."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import CtxdagError, NotFound
from ..model import validate
from .db import Database, Rows
from ..model.models import Rendered, node_from_row
from .problems import error_for


PREVIEW_LENGTH = 160


@dataclass(frozen=True)
class GraphRow:
    id: str
    role: str
    seq: int
    predecessor_id: str | None
    caller_id: str | None
    is_head: bool
    superseded_summary: bool  # a relic: no live branch renders it (rolling: not the active one)
    covers_ids: tuple[str, ...] | None  # only on capsules' rows
    retired: bool = False
    tokens: int = 0
    preview: str = ""  # the content's start, at most PREVIEW_LENGTH characters
    side_branch: bool = False
    deleted: bool = False
    fork_of: str | None = None
    out_of_context: bool = False
    blocks_json: str | None = None  # the node's stored blocks (None: plain text)

    @property
    def blocks(self) -> tuple:
        from ..model.blocks import loads

        return loads(self.blocks_json, self.preview)


class Views:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db, self._tenant = db, tenant

    async def render(self, session_id: str, head_id: str | None = None) -> Rendered:
        result = (await self.render_many([(session_id, head_id)]))[0]
        if isinstance(result, CtxdagError):
            raise result
        return result

    async def render_many(self, requests: Sequence[tuple[str, str | None]]
                          ) -> list[Rendered | CtxdagError]:
        """Renders several (session, head) pairs in one statement; failures come back as errors."""
        for session_id, head_id in requests:
            validate.identifier(session_id, "session id")
            validate.optional_identifier(head_id, "head id")
        rows = await self._db.read_untorn(
            "render_context", lambda rows: any(r["problem"] == "head_moving" for r in rows),
            tenant=self._tenant, requests=[{"session_id": s, "head_id": h} for s, h in requests])
        by_index = _joined(rows)
        results: list[Rendered | CtxdagError] = []
        for index, (session_id, head_id) in enumerate(requests):
            row = by_index.get(index)
            if row is None:
                results.append(NotFound("session", session_id))
            elif row["problem"] is not None:
                results.append(error_for(row["problem"], {"node_id": head_id,
                                                          "session_id": session_id}))
            else:
                results.append(Rendered(row["head_id"],
                                        tuple(node_from_row(n) for n in row["nodes"]),
                                        row["summary_id"], row["strategy"] or "rolling",
                                        row["summary_version"], row["kept_count"],
                                        frozenset(row["pinned_ids"]),
                                        tuple(row["stand_in_ids"]) or (
                                            (row["summary_id"],) if row["summary_id"] else ()),
                                        row["recall"],
                                        tuple((h, n) for h, n in row["hidden"])))
        return results

    async def graph_many(self, session_ids: Sequence[str], include_deleted: bool = False
                         ) -> dict[str, list[GraphRow]]:
        """Each session's graph rows in seq order (empty for sessions not of this tenant);
        nodes deleted with their branch only when `include_deleted`."""
        for session_id in session_ids:
            validate.identifier(session_id, "session id")
        rows = await self._db.read("session_graph", session_ids=list(dict.fromkeys(session_ids)),
                                   tenant=self._tenant, include_deleted=include_deleted,
                                   preview_length=PREVIEW_LENGTH)
        graphs: dict[str, list[GraphRow]] = {session_id: [] for session_id in session_ids}
        for row in rows:
            graphs[row["session_id"]].extend(_graph_row(n) for n in row["nodes"])
        for graph in graphs.values():
            graph.sort(key=lambda r: r.seq)
        return graphs


def _joined(rows: Rows) -> dict[int, dict[str, Any]]:
    """render_context's rows by request: each request's first row (part 0), holding the
    nodes of all its rows in order."""
    joined: dict[int, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: (r["index"], r["part"])):
        if row["part"] == 0:
            joined[row["index"]] = {**row, "nodes": list(row["nodes"])}
        else:
            joined[row["index"]]["nodes"].extend(row["nodes"])
    return joined


def _graph_row(n: dict) -> GraphRow:
    covers = n.get("covers_ids")
    if covers is not None:
        covers = tuple(dict.fromkeys(covers))  # a covered tool turn is also in a caller subtree
    return GraphRow(n["id"], n["role"], n["seq"], n.get("predecessor_id"), n.get("caller_id"),
                    n["is_head"], n["superseded_summary"], covers, n["retired"],
                    tokens=n["tokens"], preview=n["preview"], side_branch=n["side_branch"],
                    deleted=n["deleted"], fork_of=n.get("fork_of"),
                    out_of_context=bool(n.get("out_of_context")), blocks_json=n.get("blocks"))
