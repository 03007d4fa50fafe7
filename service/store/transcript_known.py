"""What an importer that goes on importing one file (a followed one) knows of the session
it stored (`Known`), and the node rows of its next document as storing them reads them
(`Rows`): all of them, or, when the document begins with the very rows it stored last,
only those after them.

A followed file's document is built again at each growth, and the rows of the turns no
new line changed are the same row objects (service/transcripts/document.py). When the
session holds every row of the last document live with that row's mapping digest, and no
other live node of the file's (Known.rows: then they are known to be stored as they are),
the rows a growth begins with need no look: which ids are new, which stored nodes are
mapped otherwise, which rows are written and which named, and what the session then
holds, all follow from the rows after them (and the maps Known keeps, copied).
"""
from __future__ import annotations

import operator
from dataclasses import dataclass, replace
from itertools import islice
from typing import AbstractSet, Any, Iterable, Mapping

# The node property holding its row's mapping digest (transcripts.mapping_digest).
DIGEST = "source_digest"


@dataclass(frozen=True)
class Known:
    """What an importer stored of a session it goes on importing from one file: which of
    the transcript's nodes the session holds and, of those live, their seq and mapping
    digest, as they stood after its last import, when the session's `next_seq` and
    `source` were these. A session whose next_seq or source is another since was written
    to by someone else: what it holds is read back again.

    `rows`: the node rows of the document it last stored, when the session holds each of
    them live with the row's digest (ROOT live: it is never mapped again) and `live` holds
    no other node; with their ids' positions (`index`) and the ids they hang from
    (`parents`). None when that is not so (or not told)."""

    session_id: str
    next_seq: int
    source: str | None
    stored: frozenset[str]  # the transcript's node ids the session holds (live or not)
    live: dict[str, tuple[int, str]]  # of those live: id -> (seq, mapping digest)
    rows: list[dict[str, Any]] | None = None
    index: dict[str, int] | None = None
    parents: frozenset[str] | None = None

    def without_rows(self) -> Known:
        """Itself but its rows (for keeping on disk: a loaded reading builds new rows)."""
        return replace(self, rows=None, index=None, parents=None)


class DocumentRows:
    """A document's node rows (ROOT first), as storing them reads them: `digests` holds
    the mapping digest of each row that may be new or mapped otherwise (all of them, or
    those after the ones `settled`), `in` tells an id of the document's."""

    def __init__(self, nodes: list[dict[str, Any]], known: Known | None) -> None:
        self.nodes = nodes
        self.settled = _settled(nodes, known)
        self.known = known if self.settled else None
        self.digests = {row["properties"]["id"]: row["properties"].get(DIGEST)
                        for row in islice(nodes, self.settled, None)}

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.digests or (
            self.known is not None and node_id in self._index())

    def __len__(self) -> int:
        return len(self.nodes)

    def unsettled(self) -> list[dict[str, Any]]:
        """The rows after those known stored as they are."""
        return self.nodes[self.settled:]

    def below(self, predecessors: AbstractSet[str]) -> list[str]:
        """The ids of the rows hanging from `predecessors`."""
        rows: Iterable[dict[str, Any]] = self.nodes
        if self.known is not None and not predecessors & self._parents():
            rows = self.unsettled()
        return [row["properties"]["id"] for row in rows if row["predecessor_id"] in predecessors]

    def at(self, ids: Iterable[str]) -> list[dict[str, Any]]:
        """The rows of `ids` that are the document's, in its order."""
        if self.known is None:
            wanted = set(ids)
            return [row for row in self.nodes if row["properties"]["id"] in wanted]
        index = self._index()
        tail = {node_id: i for i, node_id in enumerate(self.digests, start=self.settled)}
        positions = {index[i] if i in index else tail[i] for i in ids
                     if i in index or i in tail}
        return [self.nodes[p] for p in sorted(positions)]

    def known_after(self, known: Known, written: Iterable[str]) -> Known:
        """`known` (what the session holds once this document is stored, its rows not yet
        told) with this document's rows when they are now all stored as they are: each
        row live with its digest (the ones `written` now, the others before), no other."""
        live = known.live
        if self.known is not None:
            old = self.known
            tail = list(self.digests)
            if not set(tail) <= set(written) or len(live) != len(old.live) + len(tail):
                return known
            index = dict(old.index or {})
            index.update((node_id, i) for i, node_id in enumerate(tail, start=self.settled))
            parents = old.parents | {row["predecessor_id"] for row in self.unsettled()}
            return replace(known, rows=self.nodes, index=index, parents=frozenset(parents))
        if len(live) != len(self.nodes):
            return known
        for i, (node_id, digest) in enumerate(self.digests.items()):
            held = live.get(node_id)
            if held is None or (i > 0 and held[1] != digest):
                return known
        return replace(known, rows=self.nodes,
                       index={node_id: i for i, node_id in enumerate(self.digests)},
                       parents=frozenset(row["predecessor_id"] for row in self.nodes))

    def _index(self) -> Mapping[str, int]:
        assert self.known is not None and self.known.index is not None
        return self.known.index

    def _parents(self) -> AbstractSet[str]:
        assert self.known is not None and self.known.parents is not None
        return self.known.parents


def _settled(nodes: list[dict[str, Any]], known: Known | None) -> int:
    """How many rows `nodes` begins with that `known` holds stored as they are: all of its
    rows when `nodes` begins with them (ROOT by its id: it is built anew each time), else
    none."""
    if known is None or known.rows is None:
        return 0
    rows = known.rows
    if len(nodes) < len(rows) or not rows or \
            nodes[0]["properties"]["id"] != rows[0]["properties"]["id"] or \
            not all(map(operator.is_, islice(nodes, 1, len(rows)), islice(rows, 1, None))):
        return 0
    return len(rows)
