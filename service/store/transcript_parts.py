"""A large transcript's first import, written in parts, each in a transaction of its own,
so that neither the importer nor Neo4j holds the whole document: the importer holds one
part's node rows at a time (service/transcripts/streamed.py), Neo4j one part's writes.

The import first claims the session (a PendingImport, with a token of its own) and clears
what an earlier import of it left. Each part is a run of the session's node rows in seq
order (ROOT first), checked by the import's rules with the session's other nodes outside
it (backup.check) and written by transcript_import_part; the next part is built and
checked in a worker thread while Neo4j writes the last. transcript_import_session then,
in one transaction, ends the claim and creates the session, with its labels, tool set and
ROOT, HEAD and active summary, and checks what all the parts wrote as backup_import
checks a session imported at once. The session is what importing the whole document at
once makes of it (service/store/transcripts.py): the same nodes, edges, seqs and
properties. Until that transaction commits, its nodes belong to no session: no listing,
search, session's statement or read of a node by its id reaches them, and that last
transaction's cost does not grow with the document but for its checks.

A part or check that fails clears what the import wrote before the error is raised. What
a kill or an outage leaves is cleared by the session's next import, which takes the claim
over (pending_imports.py; an import of the session at once too, store/transcripts.py), or
by clear_abandoned, run before a folder is imported and before any import in
parts (importTranscript's too). An import whose claim another one took over (two
importers of one file) writes nothing more: Conflict.
"""
from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from typing import Any, Iterator, Mapping, Protocol

from ..model.validate import Limits
from .backup import FORMAT, VERSION, Checked, check, import_check
from .db import Database, Rows, RowCheck
from .pending_imports import import_claimed
from .problems import raise_for_problem
from .transcript_known import DocumentRows
from .transcripts import DIGEST, Known, Stored, as_imported, import_span

# A part's node rows: at most PART_NODES, and no more once their text and the media they
# carry pass PART_BYTES (images make a few nodes weigh megabytes). Checked and packed for
# the driver, a part takes a few times its bytes; each part costs one statement.
PART_NODES = 1_000
PART_BYTES = 16 << 20
# Rows are built this many at a time until a part has its bytes: a part passes
# PART_BYTES by these few nodes at most.
_BUILT_AT_ONCE = 8

# What `expected` counts of a part's own rows (the rest is the session's: its last statement).
_OF_ROWS = ("nodes", "predecessor", "caller", "covers", "carries_over", "absorbed",
            "replaced", "tool_uses", "uses", "carries")


class InParts(Protocol):
    """A transcript's document, its node rows built a part at a time."""

    session_id: str
    size: int  # node rows
    roles: Mapping[str, str]  # every node's role, by id
    keeps_rows: bool  # its rows are kept once built (a followed file's: its growths take them)
    keeps_known: bool  # what it stored is wanted (Known), for its reading's next growth

    def rows(self, start: int, stop: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The node rows at positions [start, stop) in seq order, and the media they carry."""

    def header(self) -> dict[str, Any]:
        """The document without nodes and media, as it stands once every row is built."""


async def import_in_parts(db: Database, tenant: str, document: InParts, limits: Limits,
                          part_nodes: int | None = None) -> tuple[Stored, Known | None]:
    """Imports a new session part by part, a transaction each, the session published by
    the last (BadInput, Conflict or Unavailable as import_session raises them, nothing left
    written); what it stored (None unless the document `keeps_known`)."""
    async with import_span(tenant, document.header) as done:
        stored = await _import(db, tenant, document, limits, part_nodes or PART_NODES)
        done.append(stored[0])
        return stored


async def _import(db: Database, tenant: str, document: InParts, limits: Limits,
                  part_nodes: int) -> tuple[Stored, Known | None]:
    async with import_claimed(db, tenant, document.session_id) as token:
        return await _write_parts(db, tenant, document, limits, part_nodes, token)


async def _write_parts(db: Database, tenant: str, document: InParts, limits: Limits,
                       part_nodes: int, token: str) -> tuple[Stored, Known | None]:
    """Writes the document's parts, then creates its session."""
    session_id = document.session_id
    expected: Counter[str] = Counter()
    # Each node's seq and digest, for the Known returned (a large file's are not few).
    live: dict[str, tuple[int, str | None]] | None = {} if document.keeps_known else None
    # Kept rows are held anyway: the Known returned names them, so a growth looks only at
    # the rows after them (transcript_known.DocumentRows).
    built: list[dict[str, Any]] | None = [] if document.keeps_rows else None

    def checked_part(start: int) -> tuple[int, Checked]:
        rows, media = part_from(document, start, part_nodes)
        if built is not None:
            built.extend(rows)
        outside = _Others(document.roles, {row["properties"]["id"] for row in rows})
        for row in rows if live is not None else ():
            properties = row["properties"]
            live[properties["id"]] = (properties["seq"], properties.get(DIGEST))
        return start + len(rows), check(
            {"format": FORMAT, "version": VERSION, "session": _backup_session(document.header()),
             "nodes": rows, "media": media, "calls": [], "labels": [], "branch_names": [],
             "pins": []}, limits, outside)

    building = asyncio.create_task(asyncio.to_thread(checked_part, 0))
    try:
        stop = 0
        while stop < document.size:
            stop, part = await building
            if stop < document.size:  # built while Neo4j writes this one
                building = asyncio.create_task(asyncio.to_thread(checked_part, stop))
            params = part.params
            await db.write(
                "transcript_import_part", _part_check(session_id, part), tenant=tenant,
                session_id=session_id, token=token, nodes=params["nodes"],
                referred=params["referred"], media=params["media"],
                media_stored=sorted(part.named_not_carried))
            expected.update({key: part.expected[key] for key in _OF_ROWS})
    finally:
        # A write that failed leaves the next part being built: let it end first.
        await asyncio.gather(building, return_exceptions=True)
    header = as_imported(document.header())
    last = await asyncio.to_thread(check, {**header, "nodes": [], "media": []}, limits,
                                   dict(document.roles))
    expected.update({key: value for key, value in last.expected.items()
                     if key not in _OF_ROWS})
    params = last.params
    await db.write(
        "transcript_import_session", import_check(session_id, replace(
            last, expected=dict(expected))), tenant=tenant, token=token,
        session=params["session"], calls=params["calls"], tool_sets=params["tool_sets"],
        tool_set_versions=params["tool_set_versions"], labels=params["labels"],
        branch_names=params["branch_names"], pins=params["pins"])
    properties = header["session"]["properties"]
    known = None
    if live is not None and all(digest is not None for _, digest in live.values()):
        known = Known(session_id, properties["next_seq"], properties.get("source"),
                      frozenset(live), live)
    if known is not None and built is not None:
        known = DocumentRows(built, None).known_after(known, ())
    return Stored(session_id, True, document.size, document.size), known


def part_from(document: InParts, start: int, part_nodes: int
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The node rows of the part beginning at position `start` and the media they carry: at
    most `part_nodes` rows, built _BUILT_AT_ONCE at a time until they weigh PART_BYTES."""
    rows: list[dict[str, Any]] = []
    media: dict[str, dict[str, Any]] = {}
    stop, end, weight = start, min(start + part_nodes, document.size), 0
    while stop < end and weight < PART_BYTES:
        more, carried = document.rows(stop, min(stop + _BUILT_AT_ONCE, end))
        rows += more
        stop += len(more)
        weight += sum(_weight(row) for row in more)
        for medium in carried:
            if medium["sha256"] not in media:
                media[medium["sha256"]] = medium
                weight += len(medium.get("data") or "")
    return rows, sorted(media.values(), key=lambda m: m["sha256"])


def _weight(row: dict[str, Any]) -> int:
    """About how many bytes a row's text holds (its blocks, content, metadata…)."""
    return sum(len(value) for value in row["properties"].values() if isinstance(value, str))


class _Others(Mapping[str, str]):
    """The roles of the session's nodes but a part's `own`, without copying them: a part's
    check looks up the few its rows name."""

    def __init__(self, roles: Mapping[str, str], own: set[str]) -> None:
        self._roles, self._own = roles, own

    def __getitem__(self, node_id: str) -> str:
        if node_id in self._own:
            raise KeyError(node_id)
        return self._roles[node_id]

    def __contains__(self, node_id: object) -> bool:
        return node_id not in self._own and node_id in self._roles

    def __iter__(self) -> Iterator[str]:
        return (node_id for node_id in self._roles if node_id not in self._own)

    def __len__(self) -> int:
        return len(self._roles) - sum(node_id in self._roles for node_id in self._own)


def _backup_session(header: dict[str, Any]) -> dict[str, Any]:
    return as_imported(header)["session"]


def _part_check(session_id: str, part: Checked) -> RowCheck:
    def check_rows(rows: Rows) -> None:
        raise_for_problem(rows[0]["problem"], {**rows[0], "session_id": session_id,
                                               "media_named_by": part.named_not_carried})
    return check_rows

