"""A large transcript file's growth stored without holding its document: what importing
the grown file's whole document stores (service/store/transcripts.py: the nodes it
gained, the stored ones it now maps otherwise written again with all below them, labels,
HEAD, source, in one statement), found while its node rows are built a part at a time
(service/transcripts/streamed.py).

The stored session is read first: which of the document's ids it holds, and of those
live, their mapping digest (transcript_stored). Then each part's rows are compared as
they are built, and only the rows the file gained are kept, with each row's id and
predecessor; the few stored rows that the gained rows name, and those written again, are
built once more by their position. What the gained turns replace below a stored
predecessor is read once they are known (transcript_known). The importer then holds a
part's rows, the gained ones and a few per node of the session (its id, predecessor, seq
and digest), not every row of the document.

The file must still begin with the bytes its session was last imported from: the
importer hashed them as they passed (Streamed.begins); otherwise nothing is written.
"""
from __future__ import annotations

import asyncio
from typing import Any, Iterable, Protocol

from ..model.validate import Limits
from . import records, transcript_parts
from .db import Database
from .events import Events
from .problems import Stale as StaleSession
from .transcript_known import DIGEST, DocumentRows, Known
from .transcript_parts import InParts, import_in_parts
from .transcripts import (
    FINGERPRINT, UNLABELED, Stale, Stored, as_imported, description_of, extension,
    import_span, imported_from, known_once_written, named_by, refuse_unless_begun, relabeled,
    remapped_ids, renamed_tools, replacing_turns, says_more, source_of, source_set,
    stale_tails, stored_found, write_extension,
)


class GrownInParts(InParts, Protocol):
    """A grown file's document, its node rows built a part at a time (InParts), any of
    them built again by position, and what it holds of the bytes its session was last
    imported from."""

    def again(self, positions: Iterable[int]
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The node rows at `positions`, in their order, and the media they carry."""

    def begins(self, size: int) -> tuple[int, str] | None:
        """How many of the file's first `size` bytes it holds as complete lines, and their
        sha256; None when it was not read for that size."""


async def grow_in_parts(db: Database, tenant: str, document: GrownInParts, limits: Limits,
                        events: Events, part_nodes: int | None = None
                        ) -> tuple[Stored, Known | None]:
    """What the grown file adds to its stored session, stored as store_transcript stores
    its whole document (a session gone since is imported anew, in parts); a file that no
    longer begins with what was imported is refused (Conflict), and a session written to
    while the file was read is Stale: nothing is written in either case."""
    async with import_span(tenant, document.header) as done:
        stored = await _grow(db, tenant, document, limits, events,
                             part_nodes or transcript_parts.PART_NODES)
        done.append(stored[0])
        return stored


async def _grow(db: Database, tenant: str, document: GrownInParts, limits: Limits,
                events: Events, part_nodes: int) -> tuple[Stored, Known | None]:
    header = document.header()
    unlabeled = header.get(UNLABELED, [])
    backup = as_imported(header)
    session = backup["session"]
    session_id = session["properties"]["id"]
    labeled = [label["node_id"] for label in backup["labels"]]
    held = await db.read_on_leader("transcript_stored", session_id=session_id, tenant=tenant,
                                   node_ids=list(document.roles),
                                   label_node_ids=labeled + unlabeled, new_turns=[])
    if not held:  # deleted since the file was read
        return await import_in_parts(db, tenant, document, limits, part_nodes)
    found = stored_found(held[0])
    _refuse_rewritten(document, session_id, found["source"],
                      source_of(session["properties"].get("source")).get("file"))
    compared = await asyncio.to_thread(_compared, document, found, session["root_id"],
                                       limits, part_nodes)
    labels, cleared = relabeled(backup, unlabeled, found)
    described = says_more(session["properties"], found)
    read_as = {key: session["properties"].get(key) for key in FINGERPRINT}
    if not compared.gained and not labels and not cleared and not described:
        moved = await source_set(db, tenant, session_id, session["properties"], found)
        return Stored(session_id, False, 0, document.size, redescribed=moved), _known(
            document, compared, session_id, found, found["source"], [], Stale([], {}))
    description = description_of(session["properties"], found)
    stale = await _stale(db, tenant, document, backup, compared, found)
    rows, media = await asyncio.to_thread(_cut, document, backup, compared, stale)
    kept = found["stored_ids"] - set(stale.rewritten)
    await renamed_tools(db, tenant, backup, found)
    params = await asyncio.to_thread(
        extension, {**backup, "labels": labels, "nodes": rows, "media": media}, kept,
        found["next_seq"], tenant, limits, stale.rewritten, DocumentRows(rows, None))
    await write_extension(db, {**params, "unlabeled": cleared, **description, **read_as,
                               "replaced": stale.replaced,
                               "rewritten": sorted(stale.rewritten)}, events)
    return Stored(session_id, False, len(params["nodes"]), document.size,
                  sum(label["node_id"] in found["stored_ids"] for label in labels)
                  + len(cleared), described), _known(
        document, compared, session_id, found, description["source"], params["nodes"], stale)


def _refuse_rewritten(document: GrownInParts, session_id: str, stored_source: str | None,
                      file: str | None) -> None:
    imported = imported_from(stored_source)
    if imported is None:
        return
    begun = document.begins(imported["bytes"])
    if begun is None:
        raise StaleSession(f"session {session_id} was imported again while the transcript "
                           "was read; import it again")
    refuse_unless_begun(imported, *begun, file, session_id)


class _Compared:
    """The document's rows compared with the stored session, a part at a time: each row's
    id and predecessor by position, the rows the session lacks (`gained`, by position) and
    the media they carry, the stored live nodes mapped otherwise (`remapped`) and the
    positions of those stored before mapping digests were kept (`undigested`); every row,
    when the document keeps them anyway (`kept`, else None)."""

    def __init__(self, keeps_rows: bool) -> None:
        self.kept: list[dict[str, Any]] | None = [] if keeps_rows else None
        self.ids: list[str] = []
        self.predecessors: list[str | None] = []
        self.gained: dict[int, dict[str, Any]] = {}
        self.media: dict[str, dict[str, Any]] = {}
        self.remapped: list[str] = []
        self.undigested: list[int] = []

    def positions(self, ids: set[str]) -> list[int]:
        """The positions of `ids` among the document's rows."""
        return [position for position, node_id in enumerate(self.ids) if node_id in ids]


def _compared(document: GrownInParts, found: dict[str, Any], root_id: str, limits: Limits,
              part_nodes: int) -> _Compared:
    stored, live = found["stored_ids"], found["live"]
    compared = _Compared(document.keeps_rows)
    start = 0
    while start < document.size:
        rows, media = transcript_parts.part_from(document, start, part_nodes)
        if compared.kept is not None:
            compared.kept.extend(rows)
        blocks, held = [], []
        for position, row in enumerate(rows, start=start):
            node_id = row["properties"]["id"]
            compared.ids.append(node_id)
            compared.predecessors.append(row["predecessor_id"])
            if node_id not in stored:
                compared.gained[position] = row
                blocks.append(row["properties"].get("blocks") or "")
                continue
            held.append(row)
            if node_id in live and node_id != root_id:
                # ROOT is never mapped otherwise (store/transcripts.py _stale).
                digest = live[node_id][1]
                if digest is None:
                    compared.undigested.append(position)
                elif digest != row["properties"].get(DIGEST):
                    compared.remapped.append(node_id)
        # The rows the session holds are not checked: what building them noted for the check
        # is let go (records.made_blocks), or it would grow with the session.
        records.forget_made(held, limits)
        # A node names a medium by its hash in its blocks (service/model/blocks.py).
        compared.media.update((m["sha256"], m) for m in media
                              if any(m["sha256"] in b for b in blocks))
        start += len(rows)
    return compared


async def _stale(db: Database, tenant: str, document: GrownInParts,
                 backup: dict[str, Any], compared: _Compared, found: dict[str, Any]) -> Stale:
    """store/transcripts.py's _stale, of the compared rows: the stored tails the gained
    turns replace (transcript_known's, read now that they are known) and the stored nodes
    mapped otherwise with everything below them."""
    session_id = backup["session"]["properties"]["id"]
    gained = [compared.gained[position] for position in sorted(compared.gained)]
    turns = replacing_turns(backup, None, gained)
    replaced: list[dict[str, Any]] = []
    if turns:
        predecessors = {turn["predecessor_id"] for turn in turns}
        got = await db.read_on_leader(
            "transcript_known", session_id=session_id, tenant=tenant,
            new_ids=[row["properties"]["id"] for row in gained], check_ids=[],
            label_node_ids=[], new_turns=turns,
            kept_ids=[node_id for node_id, predecessor
                      in zip(compared.ids, compared.predecessors) if predecessor in predecessors])
        if not got or got[0]["existing"] or got[0]["next_seq"] != found["next_seq"] \
                or got[0]["source"] != found["source"]:
            raise StaleSession(f"session {session_id} changed while the transcript was read; "
                               "import it again")
        replaced = got[0]["replaced"]
    remapped = list(compared.remapped)
    if compared.undigested:
        rows, _ = await asyncio.to_thread(document.again, compared.undigested)
        held = await db.read_on_leader("transcript_held", session_id=session_id, tenant=tenant,
                                       node_ids=sorted(row["properties"]["id"] for row in rows))
        remapped += remapped_ids({"nodes": rows}, held)
    below = [] if not remapped else [row["replaced"] for row in await db.read_on_leader(
        "transcript_below", session_id=session_id, tenant=tenant, top_ids=sorted(remapped))]
    tails, rewritten = stale_tails(replaced + below, document.roles)
    live, root_id = found["live"], backup["session"]["root_id"]
    if not all(node_id in live and node_id != root_id for node_id in rewritten):
        raise StaleSession(f"session {session_id} changed while the transcript was read; "
                           "import it again")
    return Stale(tails, {node_id: live[node_id][0] for node_id in rewritten})


def _cut(document: GrownInParts, backup: dict[str, Any], compared: _Compared, stale: Stale
         ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The document's rows an extension looks at (store/transcripts.py _gained): those
    gained, those written again, and the stored ones those, the labels and the session
    name, in the document's order; and the media the first two carry."""
    written = dict(compared.gained)
    media = dict(compared.media)
    again = compared.positions(set(stale.rewritten))
    rows, carried = document.again(again)
    written.update(zip(again, rows))
    media.update((m["sha256"], m) for m in carried)
    named = named_by(backup, written.values())
    referents = [position for position in compared.positions(named)
                 if position not in written]
    rows, _ = document.again(referents)
    cut = {**written, **dict(zip(referents, rows))}
    return [cut[position] for position in sorted(cut)], sorted(media.values(),
                                                               key=lambda m: m["sha256"])


def _known(document: GrownInParts, compared: _Compared, session_id: str,
           found: dict[str, Any], source: str | None, written: list[dict[str, Any]],
           stale: Stale) -> Known | None:
    """What the session holds once grown, when the document keeps what it stored; with
    the document's rows when it keeps them (a followed file's: its next growth looks only
    at the rows after them) and the session now holds them all as they are."""
    if not document.keeps_known:
        return None
    return known_once_written(session_id, found, source, written, stale,
                              DocumentRows(compared.kept or [], None))
