"""Storing an imported transcript: the whole session the first time, then only what the
file gained.

A transcript's document (service/transcripts/document.py) names its session and nodes by
ids derived from the source. When the tenant holds no session of that id, the document is
imported as a backup is (backup.import_session: one transaction, validated, invariants
checked), or, for a large file, in parts (transcript_parts.py). When it does, the nodes
it holds already are left as they are and the others are added after them by one
statement (cypher/transcript_extend.cypher), numbered after the stored ones, HEAD moved
to the transcript's head and its newest compaction made the active summary; that
statement checks the invariants the new nodes can break
(cypher/fragments/check_extension_invariants.cypher), so a grown file writes all it
gained or nothing. Lines a file gains can change how earlier ones map (a merged message
gains entries, a turn is re-hung, a compaction keeps more), so the stored nodes the file
now maps otherwise are found first (transcript_held, compared row by row) and replaced
with all below them: tombstoned when the file no longer holds them, written again under
their ids otherwise. The same file again writes nothing. A large file's growth is found
so a part at a time, without its whole document (transcript_growth.py).

A file is only ever appended to by its tool; the session's source keeps how many bytes of
complete lines were imported and their hash (`imported`), and a later import of a file
that no longer begins with them (truncated, or rewritten in place) is refused as a
CONFLICT naming the file, with nothing written: what it holds now cannot be told apart
from what it held, so it is never merged into the stored session.
"""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import os
from dataclasses import dataclass
from datetime import datetime
from typing import AbstractSet, Any, AsyncIterator, Callable, Container, Iterable

from .. import telemetry
from ..errors import BadInput, Conflict, CtxdagError
from .backup import Checked, check, checked_rows, import_session, placed, stored_form
from .db import Database, Rows
from .events import Events
from .pending_imports import clear_unfinished
from ..model import listing, utf8
from ..model.ids import utcnow
from .problems import Stale as StaleSession, raise_for_problem
from .records import NODE_REFERENCES
from .transcript_known import DIGEST, DocumentRows, Known
from ..model.validate import Limits


# The keys of a transcript's document beyond a backup's: the nodes whose label the source
# cleared (service/transcripts/document.py), and the text it was read from.
UNLABELED = "unlabeled"
CONTENT = "content"
# In place of CONTENT, from an importer that read the text a part at a time (a followed
# file): {bytes, sha256} of the complete lines it read, as _imported makes of CONTENT.
IMPORTED = "imported"
# The session source's key naming the sha256 of the tools its file names (a Codex
# session_meta's dynamic_tools, as service/transcripts/document.py takes them); absent for
# a file naming none.
TOOLS_SHA256 = "tools_sha256"


# The statements storing a file's growth, which a follower has Neo4j plan while it first
# imports the file (0.3-1 s each on first use: the first growth would wait for them).
GROWTH_STATEMENTS = ("transcript_known", "transcript_extend", "transcript_stored",
                     "transcript_below", "transcript_held", "transcript_source_set",
                     "transcript_tool_set")

# The session properties naming the file text it was last imported from (fingerprint).
FINGERPRINT = ("source_bytes", "source_prefix_sha256")


def fingerprint(text: str, file: str, tool: str, more: str = "") -> dict[str, Any]:
    """FINGERPRINT of a transcript file's text (and `more` after it): its size in bytes and
    the sha256 of its name, format and text (a copy of a Claude Code file under another
    name is another session)."""
    digest = hashlib.sha256(f"{file}\0{tool}\0".encode("utf-8"))
    size = 0
    for part in itertools.chain(utf8.parts(text), utf8.parts(more)):
        digest.update(part)
        size += len(part)
    return {"source_bytes": size, "source_prefix_sha256": digest.hexdigest()}


async def stored_unchanged(db: Database, tenant: str,
                           read_as: dict[str, Any]) -> Stored | None:
    """The session last imported from exactly this file text (`read_as`, fingerprint's),
    found without parsing it; None when none was (or the import that stored it read less
    than the whole text: it keeps no fingerprint)."""
    found = await db.read_on_leader("transcript_unchanged", tenant=tenant, **read_as)
    if not found:
        return None
    return Stored(found[0]["session_id"], False, 0, found[0]["nodes"])


@dataclass(frozen=True)
class Stored:
    session_id: str
    created: bool  # the session is new
    written: int  # nodes written (0: the file gained nothing since it was imported)
    nodes: int  # nodes the transcript maps to
    relabeled: int = 0  # labels set or cleared on nodes it held already
    redescribed: bool = False  # its source (or title) says more than the stored one

    @property
    def changed(self) -> bool:
        return bool(self.written or self.relabeled or self.redescribed)


async def store_transcript(db: Database, tenant: str, document: dict[str, Any],
                           limits: Limits, events: Events,
                           checked: Checked | None = None) -> Stored:
    """Imports or extends; an extension announces its nodes (and HEAD's move, and the
    labels it sets or clears) as events, so a viewer subscribed to the session sees them.
    (A new session announces none: nobody can be subscribed to a session before it
    exists.) What it gained is checked in a worker thread, off the event loop; a new
    session's document is checked there too, unless `checked` is first_import_check's
    of it, which says the caller found the session new (session_held): it is then
    imported without reading back what the session holds, unless it exists by then.
    Every import (CLI or API) passes here, or through transcript_parts.py for a large new
    file, and is exported as a span (service/telemetry)."""
    stored = await _exported(db, tenant, document, limits, events, None, checked)
    assert stored is not None  # only an import from what is known can be refused
    return stored[0]


async def store_known(db: Database, tenant: str, document: dict[str, Any], limits: Limits,
                      events: Events, known: Known | None
                      ) -> tuple[Stored, Known | None] | None:
    """store_transcript for an importer that goes on importing one file (a followed one)
    and keeps what each import stored (Known, None at first and when an import cannot
    tell). With `known`, which of the document's nodes the session holds is not read back
    (transcript_known in place of transcript_stored): a growth costs what it adds, not
    the session's length; and the document may carry IMPORTED in place of CONTENT. None
    when the session is not as `known` says (another writer went on with it, or no
    CONTENT to check a rewritten file against): call again without `known`, with CONTENT."""
    return await _exported(db, tenant, document, limits, events, known)


async def _exported(db: Database, tenant: str, document: dict[str, Any], limits: Limits,
                    events: Events, known: Known | None, checked: Checked | None = None
                    ) -> tuple[Stored, Known | None] | None:
    async with import_span(tenant, lambda: document) as done:
        stored = await _store_transcript(db, tenant, document, limits, events, known, checked)
        if stored is not None:
            done.append(stored[0])
        return stored


@contextlib.asynccontextmanager
async def import_span(tenant: str, document: Callable[[], dict[str, Any]]
                      ) -> AsyncIterator[list[Stored]]:
    """Exports the import its block runs as a span (service/telemetry) when it ends, of
    `document()` and what the block appends to the list it is given."""
    started, done, error = utcnow(), [], None
    try:
        yield done
    except CtxdagError as e:
        error = e
        raise
    finally:
        if telemetry.enabled():
            _export_span(tenant, document(), started, done[0] if done else None, error)


def _export_span(tenant: str, document: dict[str, Any], started: datetime, stored: Stored | None,
            error: CtxdagError | None) -> None:
    properties = document.get("session", {}).get("properties", {})
    source = source_of(properties.get("source"))
    telemetry.export_import(tenant, properties.get("id"), started, utcnow(), error=error, fields={
        "format": source.get("tool"), "file": source.get("file"),
        "created": stored and stored.created, "written": stored and stored.written,
        "nodes": stored and stored.nodes})


def first_import_check(document: dict[str, Any], limits: Limits) -> Checked:
    """A transcript's document checked as its first import checks it (BadInput when it
    breaks a rule): CPU-bound, for a worker thread, while the store writes another file."""
    return check(as_imported(document), limits)


async def session_held(db: Database, tenant: str, document: dict[str, Any]) -> bool:
    """Whether the tenant holds the session a transcript's document names already."""
    session_id = document["session"]["properties"]["id"]
    return bool(await db.read_on_leader("transcript_session_held", tenant=tenant,
                                        session_id=session_id))


async def stored_import(db: Database, tenant: str, session_id: str
                        ) -> tuple[bool, dict[str, Any] | None]:
    """Whether the tenant holds the session, and IMPORTED of the file text it was last
    imported from (None when not noted)."""
    held = await db.read_on_leader("transcript_session_held", tenant=tenant,
                                   session_id=session_id)
    return bool(held), imported_from(held[0]["source"]) if held else None


def _imported_of(document: dict[str, Any]) -> dict[str, Any] | None:
    """What the session's source notes of the text a transcript's document was read from."""
    content = document.get(CONTENT)
    return _imported(content) if content is not None else document.get(IMPORTED)


def as_imported(document: dict[str, Any]) -> dict[str, Any]:
    """A transcript's document as a backup document, its session's source noting the text
    it was read from."""
    imported = _imported_of(document)
    backup = _backup(document)
    return backup if imported is None else _with_imported(backup, imported)


async def _store_transcript(db: Database, tenant: str, document: dict[str, Any],
                            limits: Limits, events: Events, known: Known | None,
                            checked: Checked | None = None
                            ) -> tuple[Stored, Known | None] | None:
    unlabeled = document.get(UNLABELED, [])
    content = document.get(CONTENT)
    imported = _imported_of(document)
    document = as_imported(document)
    session = document["session"]
    session_id = session["properties"]["id"]
    of_session = known if known is not None and known.session_id == session_id else None
    # The rows to look at: all of them, or those after the ones known stored as they are.
    rows = DocumentRows(document["nodes"], of_session)
    labeled = [label["node_id"] for label in document["labels"]]
    if of_session is not None:
        found = await _found_known(db, tenant, document, rows, of_session,
                                   labeled + unlabeled)
        if found is None:
            return None
    elif content is None and imported is not None:
        return None  # a file read a part at a time is checked against its whole text
    else:
        if checked is not None:
            if checked.params["session"]["properties"]["id"] != session_id:
                raise ValueError("`checked` is the check of another transcript's document")
            # The caller found the session new: imported without reading it back first,
            # unless someone imported it since.
            try:
                await _import_new(db, tenant, document, limits, checked)
                return Stored(session_id, True, len(rows), len(rows)), _known_imported(document)
            except Conflict as e:
                if e.details.get("session_id") != session_id:
                    raise
        new_turns = replacing_turns(document)
        held = await db.read_on_leader("transcript_stored", session_id=session_id,
                                       tenant=tenant, node_ids=list(rows.digests),
                                       label_node_ids=labeled + unlabeled, new_turns=new_turns)
        if not held:
            await _import_new(db, tenant, document, limits)
            return Stored(session_id, True, len(rows), len(rows)), _known_imported(document)
        found = stored_found(held[0])
        if content is not None:
            _refuse_rewritten(content, source_of(session["properties"].get("source")).get("file"),
                              session_id, found["source"])
    stored: frozenset[str] = found["stored_ids"]
    labels, cleared = relabeled(document, unlabeled, found)
    described = says_more(session["properties"], found)
    read_as = {key: session["properties"].get(key) for key in FINGERPRINT}
    if all(node_id in stored for node_id in rows.digests) and not labels and not cleared \
            and not described:
        moved = await source_set(db, tenant, session_id, session["properties"], found)
        return Stored(session_id, False, 0, len(rows), redescribed=moved), known_once_written(
            session_id, found, found["source"], [], Stale([], {}), rows)
    description = description_of(session["properties"], found)
    try:
        stale = await _stale(db, tenant, document, rows, found)
        kept = stored - set(stale.rewritten)
        await renamed_tools(db, tenant, document, found)
        params = await asyncio.to_thread(extension, {**document, "labels": labels}, kept,
                                         found["next_seq"], tenant, limits, stale.rewritten,
                                         rows)
        await write_extension(db, {**params, "unlabeled": cleared, **description, **read_as,
                                   "replaced": stale.replaced,
                                   "rewritten": sorted(stale.rewritten)}, events)
    except Conflict:
        if known is None:
            raise
        return None  # the session changed since it was read: read it back whole
    return Stored(session_id, False, len(params["nodes"]), len(rows),
                  sum(label["node_id"] in stored for label in labels) + len(cleared),
                  described), known_once_written(session_id, found, description["source"],
                                                 params["nodes"], stale, rows)


def stored_found(held: dict[str, Any]) -> dict[str, Any]:
    """transcript_stored's row, its `stored_ids` a set and its `live` a map (id -> (seq,
    digest))."""
    return {**held, "stored_ids": frozenset(held["stored_ids"]),
            "live": {node["id"]: (node["seq"], node["digest"]) for node in held["live"]}}


def relabeled(document: dict[str, Any], unlabeled: list[str], found: dict[str, Any]
              ) -> tuple[list[dict[str, Any]], list[str]]:
    """The document's labels the session does not hold as they are (to set), and the
    nodes of `unlabeled` it holds a label of (to clear)."""
    stored = {label["node_id"]: label["text"] for label in found["labels"]}
    labels = [label for label in document["labels"]
              if stored.get(label["node_id"]) != label["properties"]["text"]]
    return labels, [node_id for node_id in unlabeled if node_id in stored]


async def _import_new(db: Database, tenant: str, document: dict[str, Any], limits: Limits,
                      checked: Checked | None = None) -> None:
    """import_session of a new session; when ids of its nodes are taken, what an unfinished
    import in parts of it left (pending_imports.py: a kill's, before the sweep) is cleared
    and the import tried once more."""
    try:
        await import_session(db, tenant, document, limits, checked)
    except Conflict as e:
        if not e.details.get("ids_taken"):
            raise
        await clear_unfinished(db, tenant, document["session"]["properties"]["id"])
        await import_session(db, tenant, document, limits, checked)


async def renamed_tools(db: Database, tenant: str, document: dict[str, Any],
                        found: dict[str, Any]) -> None:
    """A grown file naming other tools than the session's source notes: a new session-wide
    version offering them (the file's first import wrote version 1 with the document). A
    file naming the same tools writes none, so a setTools made since stays in force."""
    digest = source_of(document["session"]["properties"].get("source")).get(TOOLS_SHA256)
    if digest is None or digest == source_of(found["source"]).get(TOOLS_SHA256):
        return
    (version,) = document["tool_set_versions"]
    (tools,) = document["tool_sets"]
    await db.write("transcript_tool_set", session_id=document["session"]["properties"]["id"],
                   tenant=tenant, tools=tools["tools"], tools_sha256=digest,
                   created_at=datetime.fromisoformat(
                       version["properties"]["created_at"]["datetime"]), now=utcnow())


def replacing_turns(document: dict[str, Any], new: set[str] | None = None,
                    rows: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The document's turns (of `new`, when given) that transcript_stored and transcript_known
    look below the predecessor of for what they replace: no summary, and no side branch's
    first turn, which hangs from ROOT beside the tasks spawned natively; a side branch's
    later turns (a sub-agent's run a Claude Code file holds inline) replace what a cut file
    left below their predecessor, its cancelled results, as the conversation's do. `rows`:
    the document's rows holding those of `new` (all of them by default)."""
    root_id = document["session"]["root_id"]
    return [{"id": row["properties"]["id"], "predecessor_id": row["predecessor_id"],
             "side_branch": bool(row["properties"].get("side_branch"))}
            for row in (document["nodes"] if rows is None else rows)
            if (new is None or row["properties"]["id"] in new)
            and row["predecessor_id"] is not None and row["properties"]["role"] != "summary"
            and not (row["properties"].get("side_branch") and row["predecessor_id"] == root_id)]


async def _found_known(db: Database, tenant: str, document: dict[str, Any],
                       rows: DocumentRows, known: Known, label_node_ids: list[str]
                       ) -> dict[str, Any] | None:
    """transcript_stored's row for `document` (`rows`: its node rows to look at), its
    `live` as a map (id -> (seq, digest)) and `stored_ids` a set, from what `known` says
    the session holds and what transcript_known reads of what the document adds or maps
    otherwise; None when the session is not as `known` says."""
    digests = rows.digests
    new_ids = [node_id for node_id in digests if node_id not in known.stored]
    check_ids = [node_id for node_id, digest in digests.items()
                 if node_id in known.live and known.live[node_id][1] != digest]
    new = set(new_ids)
    new_turns = replacing_turns(document, new, rows.unsettled())
    kept_ids = rows.below({turn["predecessor_id"] for turn in new_turns})
    got = await db.read_on_leader("transcript_known", session_id=known.session_id,
                                  tenant=tenant, new_ids=new_ids, check_ids=check_ids,
                                  label_node_ids=label_node_ids, new_turns=new_turns,
                                  kept_ids=kept_ids)
    if not got or got[0]["existing"] or got[0]["next_seq"] != known.next_seq \
            or got[0]["source"] != known.source:
        return None
    checked = {node["id"]: (node["seq"], node["digest"]) for node in got[0]["live"]}
    if rows.known is not None:  # the rows looked at are all the document's but known ones
        live = dict(known.live)
        for node_id in check_ids:
            live.pop(node_id, None)
        stored_ids = known.stored
    else:
        looked = set(check_ids)
        live = {node_id: held for node_id, held in known.live.items()
                if node_id in digests and node_id not in looked}
        stored_ids = frozenset(node_id for node_id in digests if node_id in known.stored)
    live.update(checked)
    return {**got[0], "stored_ids": stored_ids, "live": live, "checked": checked}


def known_if_imported(document: dict[str, Any]) -> Known | None:
    """What the session holds once a transcript's `document` is imported whole as new
    (store_transcript's Stored.created), for an importer that goes on with the file."""
    return _known_imported(as_imported(document))


def _known_imported(document: dict[str, Any]) -> Known | None:
    """What a session imported whole from `document` holds."""
    live = {row["properties"]["id"]: (row["properties"]["seq"], row["properties"].get(DIGEST))
            for row in document["nodes"]}
    if any(digest is None for _, digest in live.values()):
        return None
    properties = document["session"]["properties"]
    return DocumentRows(document["nodes"], None).known_after(Known(
        properties["id"], properties["next_seq"], properties.get("source"), frozenset(live),
        live), live)


def known_once_written(session_id: str, found: dict[str, Any], source: str | None,
                       written: list[dict[str, Any]], stale: Stale, rows: DocumentRows
                       ) -> Known | None:
    """What the session holds once the rows `written` (transcript_extend's $nodes) were
    added to what `found` read of it and the tails `stale` replaced were tombstoned, with
    the document's `rows` when it then holds them all as they are; None when a node of it
    has no mapping digest (imported before they were kept)."""
    gone = {node_id for group in stale.replaced for node_id in group["ids"]}
    live = {node_id: held for node_id, held in found["live"].items() if node_id not in gone} \
        if gone else dict(found["live"])
    added = {row["properties"]["id"]: (row["properties"]["seq"], row["properties"].get(DIGEST))
             for row in written}
    live.update(added)
    # What a Known said is digested; only what was read or written since may not be.
    fresh = live.values() if rows.known is None else [*found["checked"].values(),
                                                       *added.values()]
    if any(digest is None for _, digest in fresh):
        return None
    stored = found["stored_ids"].union(added)
    next_seq = found["next_seq"] + len(written) - len(stale.rewritten)
    return rows.known_after(Known(session_id, next_seq, source, stored, live), added)


def _backup(document: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in document.items()
            if key not in (UNLABELED, CONTENT, IMPORTED)}


def _complete(content: str) -> int:
    """Where the text's complete lines end (a last line being written may still grow)."""
    return content.rfind("\n") + 1


def _imported(content: str) -> dict[str, Any]:
    """IMPORTED of a file's text: its complete lines' size in bytes and sha256."""
    size, sha256 = utf8.digest(content, _complete(content))
    return {"bytes": size, "sha256": sha256}


def _with_imported(document: dict[str, Any], imported: dict[str, Any]) -> dict[str, Any]:
    """The document with its session's source noting the complete lines it was read from."""
    properties = document["session"]["properties"]
    source = {**source_of(properties.get("source")), "imported": imported}
    properties = {**properties, "source": json.dumps(source, ensure_ascii=False, sort_keys=True)}
    return {**document, "session": {**document["session"], "properties": properties}}


def _refuse_rewritten(content: str, file: str | None, session_id: str,
                      stored_source: str | None) -> None:
    """CONFLICT when the file does not begin with the lines the session was imported from
    (a session imported before they were noted is not checked)."""
    imported = imported_from(stored_source)
    if imported is None:
        return
    size, digest, read = imported["bytes"], hashlib.sha256(), 0
    for part in utf8.parts(content, _complete(content)):
        digest.update(part[:size - read])
        read += len(part)
        if read >= size:
            break
    refuse_unless_begun(imported, min(read, size), digest.hexdigest(), file, session_id)


def imported_from(stored_source: str | None) -> dict[str, Any] | None:
    """IMPORTED of the file text a stored session was last imported from; None when it
    was imported before that was noted (its file is then not checked)."""
    imported = source_of(stored_source).get("imported")
    return imported if isinstance(imported, dict) else None


def refuse_unless_begun(imported: dict[str, Any], read: int, sha256: str, file: str | None,
                        session_id: str) -> None:
    """CONFLICT unless the file holds the `imported` bytes: `read` of them, as complete
    lines, hashing to `sha256`."""
    size = imported["bytes"]
    if read >= size and sha256 == imported["sha256"]:
        return
    cut = "is shorter than" if read < size else "no longer begins with"
    raise Conflict(f"{file or 'the transcript'}: the file {cut} the {size} bytes "
                   f"imported into session {session_id} (its tool truncated or rewrote it); "
                   "nothing written: an import only adds what a file gained")


@dataclass(frozen=True)
class Stale:
    """What a grown transcript replaces of the session as stored: the tails it tombstones
    (transcript_extend's $replaced) and the stored nodes it writes again ($rewritten)."""

    replaced: list[dict[str, Any]]
    rewritten: dict[str, int]  # id -> its seq, which it keeps


async def _stale(db: Database, tenant: str, document: dict[str, Any], rows: DocumentRows,
                 found: dict[str, Any]) -> Stale:
    """The stale tail of the stored session: what `replaced` (transcript_stored's) names,
    and each stored node the document maps otherwise than it was stored (`rows.digests`:
    how it maps each node that may be; the others are known stored as they are) — a turn
    re-hung below a result that arrived, a summary keeping more — with everything below
    it. A node written with a mapping digest is compared by it; only those written before
    digests were kept are read back (transcript_held)."""
    session_id = document["session"]["properties"]["id"]
    # ROOT is never mapped otherwise: it stays as stored, as the calls that read it saw it
    # (a Codex session imported before base_instructions were read keeps its empty ROOT,
    # rather than having every turn below it replaced).
    root_id = document["session"]["root_id"]
    live = found["live"]
    looked = [(node_id, live[node_id][1], digest) for node_id, digest in rows.digests.items()
              if node_id in live and node_id != root_id]
    remapped = [node_id for node_id, held, digest in looked
                if held is not None and held != digest]
    undigested = sorted(node_id for node_id, held, _ in looked if held is None)
    if undigested:
        held = await db.read_on_leader("transcript_held", session_id=session_id,
                                       tenant=tenant, node_ids=undigested)
        remapped += await asyncio.to_thread(remapped_ids, document, held)
    below = [] if not remapped else [row["replaced"] for row in await db.read_on_leader(
        "transcript_below", session_id=session_id, tenant=tenant, top_ids=sorted(remapped))]
    tails, rewritten = stale_tails(found["replaced"] + below, rows)
    # Only when what an importer knew is out of date:
    if not all(node_id in live and node_id != root_id for node_id in rewritten):
        raise StaleSession(f"session {session_id} changed while the transcript was read; "
                           "import it again")
    return Stale(tails, {node_id: live[node_id][0] for node_id in rewritten})


# What ctxdag itself moves on a node it holds (superseding a summary, carrying a turn
# over) and the write order: no mapping of the source's.
_MOVED_BY_THE_LEDGER = {"seq", "tenant", "superseded_summary", "retired_at", "carried_from_id"}


def remapped_ids(document: dict[str, Any], held: list[dict[str, Any]]) -> list[str]:
    """The held (stored, live) nodes whose row in `document` differs from the stored one:
    other properties, predecessor, caller or edges. Lines a file gains can change how
    earlier ones map, not only add nodes."""
    rows = {row["properties"]["id"]: row for row in document["nodes"]}
    remapped = []
    for node in held:
        row = stored_form(rows[node["id"]])
        if _mapping(row) != _mapping(node):
            remapped.append(node["id"])
    return sorted(remapped)


def _mapping(row: dict[str, Any]) -> tuple[Any, ...]:
    properties = {k: v for k, v in row["properties"].items()
                  if k not in _MOVED_BY_THE_LEDGER and k != DIGEST}
    return (properties, row["predecessor_id"], row["caller_id"],
            sorted((c["node_id"], c["order"]) for c in row["covers"]),
            sorted((c["node_id"], c["order"]) for c in row.get("carries_over") or []))


def mapping_digest(row: dict[str, Any]) -> str:
    """The sha256 of how a document's node row maps its source (what remapped_ids
    compares), kept on the node as DIGEST: a grown file's row with another digest is a
    node it maps otherwise, found without reading the stored node back."""
    text = _MAPPING_TEXT.encode(_mapping(row))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# json.dumps(…, sort_keys=True, ensure_ascii=False, separators=(",", ":")), made once (a
# digest a node row): the digests stored since are this text's, so it never changes.
_MAPPING_TEXT = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def says_more(properties: dict[str, Any], stored: dict[str, Any]) -> bool:
    """The document says more of where the session came from than the stored session: new
    facts (a file read under another name counts for none) or a new title of the source's."""
    new, old = source_of(properties.get("source")), source_of(stored["source"])
    unlisted = bool(new) and stored["tool"] is None  # imported before sessions were listed
    return unlisted or ({k: v for k, v in new.items() if k != "file"}
                        != {k: v for k, v in old.items() if k != "file"})


def _moved(properties: dict[str, Any], stored: dict[str, Any]) -> bool:
    """Whether the session's file was read from another absolute path than the stored one
    (Codex moves the rollout of a thread it archives). A text posted under a name of the
    client's (not an absolute path) moved nowhere."""
    new = source_of(properties.get("source")).get("file")
    return isinstance(new, str) and os.path.isabs(new) \
        and new != source_of(stored["source"]).get("file")


async def source_set(db: Database, tenant: str, session_id: str, properties: dict[str, Any],
                     stored: dict[str, Any]) -> bool:
    """What an import that wrote no node keeps of the file it read: its fingerprint, and
    where the file is when it moved (transcript_source_set); whether it moved."""
    read_as = {key: properties.get(key) for key in FINGERPRINT}
    moved = _moved(properties, stored)
    listed = listing.from_source(source_of(properties.get("source"))) if moved else {}
    if moved or read_as != {key: stored[key] for key in FINGERPRINT}:
        await db.write("transcript_source_set", session_id=session_id, tenant=tenant,
                       **read_as, source=properties.get("source"),
                       source_file=listed.get("source_file"))
    return moved


def description_of(properties: dict[str, Any], stored: dict[str, Any]) -> dict[str, Any]:
    """transcript_extend's source, listing, title and source_title (the title the stored
    source gave, which the session's title still is unless the user changed it)."""
    source = properties.get("source")
    return {"source": source or stored["source"],
            "listing": listing.from_source(source_of(source)) if source else None,
            "title": properties.get("title"),
            "source_title": source_of(stored["source"]).get("title")}


def source_of(text: str | None) -> dict[str, Any]:
    return json.loads(text) if text else {}


def stale_tails(rows: list[dict[str, Any]],
                named: Container[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """The stored tails `rows` name ({id, top_id, predecessor_id, metadata}: each node at or
    below a stale top), merged where one lies below another, as transcript_extend takes
    them: the nodes the document (`named` its ids) still holds, written again, and the
    others, tombstoned (one group per tail, announced as a deleted branch). A tail holding a
    node the import did not write (the session went on in ctxdag from it) stays: what was
    written there is not the file's."""
    nodes = {row["id"]: row for row in rows}

    def top(node_id: str) -> str:
        while nodes[node_id]["predecessor_id"] in nodes:
            node_id = nodes[node_id]["predecessor_id"]
        return node_id

    tails: dict[str, list[dict[str, Any]]] = {}
    for node_id in sorted(nodes):
        tails.setdefault(top(node_id), []).append(nodes[node_id])
    replaced, rewritten = [], []
    for members in tails.values():
        if not all("source" in json.loads(node["metadata"] or "{}") for node in members):
            continue
        rewritten += [node["id"] for node in members if node["id"] in named]
        gone = {node["id"]: node for node in members if node["id"] not in named}
        if not gone:
            continue
        below = {node["predecessor_id"] for node in gone.values()}
        tips = sorted(node_id for node_id in gone if node_id not in below)
        fork = min(node["predecessor_id"] for node in gone.values()
                   if node["predecessor_id"] not in gone)
        replaced.append({"fork_point_id": fork, "tip_id": tips[0], "ids": sorted(gone)})
    return replaced, sorted(rewritten)


def extension(document: dict[str, Any], stored: AbstractSet[str], next_seq: int,
              tenant: str, limits: Limits, rewritten: dict[str, int] | None = None,
              document_rows: DocumentRows | None = None) -> dict[str, Any]:
    """transcript_extend's parameters but `unlabeled`, `replaced` and `rewritten`: the
    document's nodes `stored` lacks, numbered from `next_seq` (the session's when `stored`
    was read) but those `rewritten` (written again, each keeping its seq), and its
    labels. `document_rows`: the document's rows as the store looks at them."""
    session = document["session"]
    rewritten = rewritten or {}
    rows, labels = checked_rows(_gained(document, stored, document_rows, rewritten), limits)
    new = [row for row in rows if row["properties"]["id"] not in stored]
    seqs = iter(range(next_seq, next_seq + len(new)))
    numbered = [{**row, "properties": {**row["properties"], "seq": rewritten[row["properties"]["id"]]
                                       if row["properties"]["id"] in rewritten else next(seqs)}}
                for row in new]
    media = {digest for row in new for digest in row["media_refs"]}
    return {"session_id": session["properties"]["id"], "tenant": tenant,
            "expected_next_seq": next_seq, "nodes": numbered,
            "media": [m for m in document["media"] if m["sha256"] in media],
            "head_id": session["head_id"], "active_summary_id": session["active_summary_id"],
            "labels": labels}


async def write_extension(db: Database, params: dict[str, Any], events: Events) -> None:
    """One statement: the nodes, HEAD, the active summary, the labels and their events, or
    nothing when they would break an invariant of the session (BadInput) or it changed
    (Stale)."""
    session_id = params["session_id"]
    nodes, referred = placed(params["nodes"])
    written = await db.write("transcript_extend", _extend_check(session_id), now=utcnow(),
                             **{"unlabeled": [], "source": None, "title": None,
                                "source_title": None, "replaced": [], "rewritten": [], "listing": None,
                                "source_bytes": None, "source_prefix_sha256": None,
                                **params, "nodes": nodes, "referred": referred})
    await events.committed(session_id, written[0]["events"])


def _gained(document: dict[str, Any], stored: AbstractSet[str],
            rows: DocumentRows | None = None, rewritten: Iterable[str] = ()) -> dict[str, Any]:
    """The document cut down to the nodes it adds to the stored ones (of `rows`, those
    looked at, and those `rewritten`: the others are known stored), with the stored nodes
    they, its labels and the session name (as referents) and the media they carry: checked
    by the import's rules at a cost that follows what the file gained, not the session."""
    session = document["session"]
    rows = rows if rows is not None else DocumentRows(document["nodes"], None)
    new = rows.at([node_id for node_id in (*rows.digests, *rewritten) if node_id not in stored])
    named = named_by(document, new)
    taken = rows.at([*named, *(row["properties"]["id"] for row in new)])
    kept = [row if row["properties"]["id"] not in stored else _referent(row) for row in taken]
    # A node names a medium by its hash in its blocks (service/model/blocks.py).
    blocks = [row["properties"].get("blocks") or "" for row in kept]
    return {**_backup(document), "nodes": kept,
            "media": [m for m in document["media"] if any(m["sha256"] in b for b in blocks)]}


def named_by(document: dict[str, Any], rows: Iterable[dict[str, Any]]) -> set[str]:
    """The ids of the nodes a cut of the document holding `rows` names: its session's ROOT,
    HEAD and active summary, its labels' nodes, and each row's predecessor, caller, covered
    nodes and node references."""
    session = document["session"]
    named = {session["root_id"], session["head_id"], session["active_summary_id"]}
    named.update(label["node_id"] for label in document["labels"])
    for row in rows:
        named.update((row["predecessor_id"], row["caller_id"]))
        named.update(cover["node_id"] for cover in row["covers"])
        for key in NODE_REFERENCES:
            value = row["properties"].get(key)
            named.update(value if isinstance(value, list) else [value])
    return named - {None}


def _referent(row: dict[str, Any]) -> dict[str, Any]:
    """A stored node as the rows added may name it: its own properties, none of the nodes it
    names (stored with it, checked then; it is not written again)."""
    return {"properties": {key: value for key, value in row["properties"].items()
                           if key not in NODE_REFERENCES},
            "predecessor_id": None, "caller_id": None, "covers": [], "carries_over": []}


def _extend_check(session_id: str) -> Callable[[Rows], None]:
    def check(rows: Rows) -> None:
        row = rows[0]
        raise_for_problem(row["problem"], {**row, "session_id": session_id})
        if row["violations"]:
            raise BadInput(f"the entries the transcript gained cannot follow session "
                           f"{session_id} as stored: " + "; ".join(row["violations"][:5]))
        seqs = [event["seq"] for event in row["events"]]
        if seqs and seqs != list(range(seqs[0], seqs[0] + len(seqs))):
            raise Conflict(f"session {session_id}: the events written for the entries the "
                           f"transcript gained are not numbered one after another ({seqs})")

    return check
