"""Backup: one session as a JSON document, and the document back into the store.

The document (format "ctxdag-session", version 4):

    {"format": "ctxdag-session", "version": 4,
     "exported_at": ISO-8601, "source_tenant": str,      # information only, never imported
     "session": {"properties": {...}, "root_id": str, "head_id": str,
                 "active_summary_id": str | null},
     "nodes": [{"properties": {...}, "predecessor_id": str | null, "caller_id": str | null,
                "covers": [{"node_id": str, "order": int}, ...],
                "carries_over": [{"node_id": str, "order": int}, ...]}, ...], # seq order
     "calls": [{"properties": {...}, "reads": [{"node_id": str, "position": int}, ...],
                "produced_id": str | null}, ...],                            # start order
     "media": [{"sha256": str, "media_type": str, "data": base64, "bytes": int}, ...],
                                                                             # hash order
     "labels": [{"node_id": str, "properties": {"text": str, "labeled_at": …}}, ...],
                                                                             # node id order
     "branch_names": [{"node_id": str, "properties": {"name": str, "named_at": …}}, ...],
                                                                             # node id order
     "pins": [{"node_id": str, "properties": {"pinned_at": …}}, ...]}        # node id order

`properties` are every stored property except `tenant` (an import writes into the
importing tenant): exactly the properties the ledger writes, each a value its API could
have written (service/store/records.py). Values are JSON strings, integers and
booleans, and lists of them (a summary's retained_ids); a timestamp is an object holding
an ISO-8601 string, nanoseconds and offset (and zone, in brackets) included:
{"datetime": "2025-01-02T03:04:05.123456789+00:00"}.

Content blocks (service/model/blocks.py) travel as the node properties that hold them:
`blocks` (the stored JSON text, media named by hash), `tool_use_ids` and `answered_ids`.
A node's ToolUse nodes and USES edges, its ANSWERS edges (to the tool uses of its
predecessor, is_error from its tool_result blocks) and CARRIES edges are not listed: an
import writes them from the blocks and the chain, as the API's writes do. `media` holds
each medium the session's nodes carry, once, its data as the ledger stores it (standard
padded base64 of at most the importing service's max_media_bytes, under its sha256); an
import stores one per tenant and hash, keeping one the tenant holds already. A medium a
node names may be left out of `media` when the importing tenant has it stored already.

`tool_sets` (present when some call was offered tools or a tool set version offers some)
holds those tools, each once: `{"sha256", "tools"}`, the canonical JSON text a call's or a
version's `tools_sha256` names; an import stores one per tenant and hash and links each
call to its own (OFFERED). `tool_set_versions` (from version 5; present when the session's
tools were set: setTools) holds its tool set versions in order, `[{"properties": {version,
anchor_id?, tools_sha256?, tool_choice?, created_at}}, ...]` (version 1, 2, …; anchor_id a
node of the document; tool_choice the stored JSON text); an import writes each with its
TOOL_SET_VERSION edge and, when it offers tools, its OFFERS edge.

Version 1 (before media were exported) has no `media`: it is read as version 2 without
any, so the media its nodes name must be stored for the importing tenant. Versions 1 and 2
(before labels) have no `labels`: they are read as without any. A label is the session's
LABELED relationship to the node, its properties those of that relationship. Versions 1
to 3 (before branch names, pins and branch summaries) have no `branch_names`, no `pins`
and no `carries_over` on their nodes: they are read as without any. A branch name is the
session's NAMES relationship to the branch's tip, a pin its PINNED relationship to the
node, their properties those of that relationship; a carry node's `carries_over` are its
CARRIES_OVER edges, to the turns it summarizes in chain order.

A summary's `covers` are the turns it newly covered (its COVERS edges, orders
0..covers_new_count-1); the rest of its segment is the summary it absorbed. Its ABSORBED
and REPLACED edges are not listed: an import writes them from `absorbed_id` and
`replaced_id`. A LEGACY export (written before migration 003) lists a summary's whole
segment and has no `covers_new_count`: an import converts such a summary as the migration
does (the absorbed summary's covers_count leading entries dropped, the rest renumbered
from 0, covers_new_count set, replaced_id = absorbed_id) before checking anything; an
export naming a deleted summary as the session's active one (written before migration 007)
is imported without an active summary, as the migration leaves such a session.

Export is one read statement. Import validates the whole document first, by the same
rules as the API's writes, then is one write statement in one transaction that
refuses ids already in the store (of any tenant, naming only the importing tenant's:
problem codes `session_exists` / `ids_exist`, turned into errors by
service/store/problems.py) and media named but neither carried nor stored
(`media_not_carried`), and checks the session's invariants on what it wrote (tool pairs
included): a failed check rolls everything back, so an import leaves either the whole
session or nothing.
"""
from __future__ import annotations

import asyncio
import functools

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Mapping

from neo4j.time import DateTime

from ..errors import BadInput, Conflict, NotFound
from . import records
from ..model import validate
from .db import Database, Rows
from ..model.ids import utcnow
from ..model.models import Purpose
from .problems import raise_for_problem
from ..model.validate import Limits

FORMAT = "ctxdag-session"
VERSION = 5
# 1 has no media, 1-2 no labels, 1-3 no names, pins, carries_over, 1-4 no tool set versions
READABLE = (1, 2, 3, 4, 5)
INFORMATION_KEYS = ("exported_at", "source_tenant")  # differ between exports of one session
# Where the session's event sequence stands: events are not exported, and an imported
# session's sequence starts afresh (backup_import).
EVENT_COUNTERS = ("next_event_seq", "events_pruned_through")
PROBLEMS_NAMED = 5
# A session's nodes, calls and media are exported a page of each kind at a time: a result
# of Neo4j's is one message, and all the nodes of a long session are more than its network
# buffers take. A call holds its reads, a medium its data: fewer of them a page.
EXPORT_PAGES = {"node": 5_000, "call": 500, "media": 50}
# Reads of a long session's pages begun again when it was written to between them.
EXPORT_ATTEMPTS = 3

_DOCUMENT_KEYS = {"format", "version", "session", "nodes", "calls", *INFORMATION_KEYS}
_MEDIA_KEY = "media"  # from version 2
_TOOL_SETS_KEY = "tool_sets"  # from version 2; absent when no call was offered tools
_LABELS_KEY = "labels"  # from version 3
_BRANCH_NAMES_KEY = "branch_names"  # from version 4
_PINS_KEY = "pins"  # from version 4
_TOOL_SET_VERSIONS_KEY = "tool_set_versions"  # from version 5; absent when tools were never set
_TOOL_SET_VERSION_KEYS = {"version", "anchor_id", "tools_sha256", "tool_choice", "created_at"}
_SESSION_KEYS = {"properties", "root_id", "head_id", "active_summary_id"}
_NODE_KEYS = {"properties", "predecessor_id", "caller_id", "covers"}
_CARRIES_KEY = "carries_over"  # on nodes, from version 4
_CALL_KEYS = {"properties", "reads", "produced_id"}
_MIN_INTEGER = -validate.MAX_INTEGER - 1


# --- export -----------------------------------------------------------------------------

async def export_session(db: Database, tenant: str, session_id: str, limits: Limits) -> dict:
    """The session of `tenant` as a JSON-serializable document (NotFound when there is none)."""
    validate.identifier(session_id, "session id")
    for _ in range(EXPORT_ATTEMPTS):
        read = await _export_read(db, tenant, session_id)
        if read is not None:
            row, listed = read
            break
    else:
        raise Conflict(f"session {session_id} was written to while it was exported, "
                       f"{EXPORT_ATTEMPTS} times; export it again once it is quiet")
    where = f"session {session_id}"
    document = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": utcnow().isoformat(),
        "source_tenant": tenant,
        "session": {
            "properties": _encode_properties(
                {k: v for k, v in row["session"].items() if k not in EVENT_COUNTERS}, where),
            "root_id": _one(row["root_ids"], f"{where} ROOT", required=True),
            "head_id": _one(row["head_ids"], f"{where} HEAD", required=True),
            "active_summary_id": _one(row["active_summary_ids"], f"{where} ACTIVE_SUMMARY"),
        },
        **listed,
        "labels": [{"node_id": label["node_id"], "properties": _encode_properties(
            label["properties"], f"label of node {label['node_id']}")}
            for label in row["labels"]],
        "branch_names": [{"node_id": name["node_id"], "properties": _encode_properties(
            name["properties"], f"branch name of node {name['node_id']}")}
            for name in row["branch_names"]],
        _PINS_KEY: [{"node_id": pin["node_id"], "properties": _encode_properties(
            pin["properties"], f"pin of node {pin['node_id']}")} for pin in row["pins"]],
    }
    if row["tool_sets"]:
        document[_TOOL_SETS_KEY] = [dict(tool_set) for tool_set in row["tool_sets"]]
    if row["tool_set_versions"]:
        document[_TOOL_SET_VERSIONS_KEY] = [
            {"properties": _encode_properties(
                {k: v for k, v in version["properties"].items() if k != "session_id"},
                f"{where} tool set version {version['properties'].get('version')}")}
            for version in row["tool_set_versions"]]
    try:
        parsed = _parse(document, limits)  # what cannot be imported again is not a backup
        if parsed.named_not_carried:
            raise BadInput(_not_carried(parsed.named_not_carried))
    except BadInput as e:
        raise Conflict(f"{where} cannot be exported as it is stored: {e.message} "
                       f"(check it with `ctxdag check {session_id}`)") from e
    return document


async def _export_read(db: Database, tenant: str, session_id: str
                       ) -> tuple[dict[str, Any], dict[str, list[dict]]] | None:
    """backup_export's row, and the session's nodes, calls and media read a page of each
    at a time, each page from where the last ended, and taken into the document as they
    come (the rows Neo4j returned of a long session are not held beside it); None when the
    session gained nodes or calls between its pages, which would shift them."""
    pages = {f"{kind}_page": page for kind, page in EXPORT_PAGES.items()}
    rows = await db.read("backup_export", session_id=session_id, tenant=tenant,
                         **pages, **_FIRST_PAGES)
    if not rows:
        raise NotFound("session", session_id)
    row = rows[0]
    as_read = (row["session"].get("next_seq"), row["call_count"])
    listed = {key: [convert(item) for item in row[key]] for key, convert in _EXPORTED.items()}
    for kind, key in (("node", "nodes"), ("call", "calls"), ("media", "media")):
        page, count, last = EXPORT_PAGES[kind], row[f"{kind}_count"], row[key]
        while len(last) == page and len(listed[key]) < count:
            found = await db.read(f"backup_export_{key}", session_id=session_id,
                                  tenant=tenant, **{f"{kind}_page": page},
                                  **_AFTER[kind](last[-1], len(listed[key])))
            if not found or (found[0]["next_seq"], found[0]["call_count"]) != as_read:
                return None
            last = found[0][key]
            listed[key] += map(_EXPORTED[key], last)
        if len(listed[key]) < count:  # on no page: a node's seq or a call's start is amiss
            raise Conflict(
                f"session {session_id} cannot be exported as it is stored: "
                f"{count - len(listed[key])} of its {count} {key} have no "
                f"{_ORDERED_BY[kind]} (check it with `ctxdag check {session_id}`)")
    return row, listed


# The first page of each kind, and the next after a page's last row (media are paged by
# position: a session carries few).
_FIRST_PAGES = {"node_after_seq": -validate.MAX_INTEGER - 1, "node_after_id": "",
                "call_after_started_at": DateTime(1, 1, 1, tzinfo=timezone.utc),
                "call_after_id": "", "media_skip": 0}
_AFTER: dict[str, Callable[[Mapping[str, Any], int], dict[str, Any]]] = {
    "node": lambda last, read: {"node_after_seq": last["properties"]["seq"],
                                "node_after_id": last["properties"].get("id")},
    "call": lambda last, read: {"call_after_started_at": last["properties"]["started_at"],
                                "call_after_id": last["properties"].get("id")},
    "media": lambda last, read: {"media_skip": read},
}
_ORDERED_BY = {"node": "numeric seq", "call": "start time", "media": "place"}


def _export_node(node: Mapping[str, Any]) -> dict:
    where = records.label("node", node["properties"])
    return {
        "properties": _encode_properties(node["properties"], where),
        "predecessor_id": _one(node["predecessor_ids"], f"{where} PREDECESSOR"),
        "caller_id": _one(node["caller_ids"], f"{where} CALLER"),
        "covers": list(node["covers"]),
        _CARRIES_KEY: list(node["carries_over"]),
    }


def _export_call(call: Mapping[str, Any]) -> dict:
    where = records.label("call", call["properties"])
    return {
        "properties": _encode_properties(call["properties"], where),
        "reads": list(call["reads"]),
        "produced_id": _one(call["produced_ids"], f"{where} PRODUCED"),
    }


# How each kind read a page at a time is taken into the document.
_EXPORTED: dict[str, Callable[[Mapping[str, Any]], dict]] = {
    "nodes": _export_node, "calls": _export_call, "media": dict}


def _one(ids: list[str], what: str, required: bool = False) -> str | None:
    if len(ids) > 1 or (required and not ids):
        raise Conflict(f"{what}: {len(ids)} relationships where the ledger keeps "
                       f"{'exactly' if required else 'at most'} one; check the session")
    return ids[0] if ids else None


def _encode_properties(properties: Mapping[str, Any], where: str) -> dict:
    return {key: _encode(value, f"{where} {key}")
            for key, value in sorted(properties.items()) if key != "tenant"}


def _encode(value: Any, where: str) -> Any:
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list) and all(isinstance(v, (bool, int, float, str)) for v in value):
        return list(value)
    if isinstance(value, DateTime) and value.tzinfo is not None:
        return {"datetime": value.iso_format() + _zone_suffix(value.tzinfo)}
    raise Conflict(f"{where} holds a {type(value).__name__}, which a backup cannot carry "
                   "(check the session)")


def _zone_suffix(tz: Any) -> str:
    """'[Europe/Berlin]' for a named zone; nothing for an offset.

    The driver reads the offset +00:00 and the zone 'UTC' as the same pytz UTC, so
    UTC is written as the offset — which is what ctxdag stores (utcnow()).
    """
    zone = getattr(tz, "zone", None) or getattr(tz, "key", None)
    return f"[{zone}]" if isinstance(zone, str) and zone != "UTC" else ""


# --- import -----------------------------------------------------------------------------

async def import_session(db: Database, tenant: str, document: Any, limits: Limits,
                         checked: Checked | None = None) -> str:
    """Rebuilds an exported session in `tenant`; returns its id.

    BadInput for a document that is not a well-formed export (of a READABLE version),
    names media it neither carries nor finds stored for `tenant`, holds a value
    the API could not have written (by `limits`, the importing service's), or does not
    describe a sound session; Conflict when its session (or a node or call id) already
    exists in any tenant. Either way nothing is written. The document is checked in a
    worker thread (a large one takes long), so the event loop keeps serving meanwhile,
    unless `checked` is what `check(document, limits)` made of it already (a folder
    import checks the next file while the last one is written).
    """
    parsed = checked if checked is not None else await asyncio.to_thread(check, document, limits)
    session_id = parsed.params["session"]["properties"]["id"]
    await db.write("backup_import", import_check(session_id, parsed), tenant=tenant,
                   media_stored=sorted(parsed.named_not_carried), **parsed.params)
    return session_id


def checked_rows(document: Any, limits: Limits) -> tuple[list[dict], list[dict]]:
    """The node rows (each with what its blocks imply) and the labels of a document that
    passes every rule an import applies, as the import statement takes them; BadInput
    otherwise."""
    parsed = _parse(document, limits)
    if parsed.named_not_carried:
        raise BadInput(_not_carried(parsed.named_not_carried))
    return parsed.params["nodes"], parsed.params["labels"]


def stored_form(row: Any) -> dict[str, Any]:
    """A document's node row with its values as the import stores them (timestamps as
    Neo4j's), to compare with a stored node; BadInput when it holds a value no import
    takes."""
    return _node(row, 0, VERSION)


@dataclass(frozen=True)
class Checked:
    """A document that passed every rule an import applies, as its statement takes it."""

    params: dict[str, Any]  # the import statement's: session, nodes (placed), referred, calls, …
    expected: dict[str, int]  # what it must create
    named_not_carried: dict[str, str]  # hashes the nodes name outside `media`: the first namer


def check(document: Any, limits: Limits,
          outside: Mapping[str, str] | None = None) -> Checked:
    """The document checked by import_session's rules (BadInput when it breaks one); pure
    and CPU-bound: run it in a worker thread. `outside`: the session's nodes (id -> role)
    that this document, a part of the session's (an import in parts: transcript_parts.py),
    does not hold, which its rows may name; each part is checked with the others outside."""
    return _parse(document, limits, outside)


def import_check(session_id: str, parsed: Checked) -> Callable[[Rows], None]:
    """Runs inside the import's transaction: raising rolls the whole import back.

    The ids already taken and media not stored are problem codes
    (service/store/problems.py); what was created and the invariants of the result are
    checked here.
    """
    expected = parsed.expected

    def check(rows: Rows) -> None:
        row = rows[0]
        raise_for_problem(row["problem"], {**row, "session_id": session_id,
                                           "media_named_by": parsed.named_not_carried})
        if row["created"] != expected:
            raise Conflict(f"importing session {session_id} gave {row['created']}, not the "
                           f"document's {expected}: nodes or calls of that session id were "
                           "left in the store without their session")
        if row["violations"]:
            raise BadInput("the document does not describe a sound session: "
                           + _listed(row["violations"]))

    return check


def _listed(problems: list[str]) -> str:
    rest = len(problems) - PROBLEMS_NAMED
    return "; ".join(problems[:PROBLEMS_NAMED]) + (f"; and {rest} more" if rest > 0 else "")


def _parse(document: Any, limits: Limits,
           outside: Mapping[str, str] | None = None) -> Checked:
    """The import statement's parameters, what it must create and the media it must find
    stored; BadInput if malformed."""
    try:
        return _checked(document, limits, outside if outside is not None else {})
    finally:
        records.forget_checked_blocks()


def _checked(document: Any, limits: Limits, outside: Mapping[str, str]) -> Checked:
    if not isinstance(document, dict):
        raise BadInput("the document must be an object")
    version = document.get("version")
    if document.get("format") != FORMAT or type(version) is not int:
        raise BadInput(f"not a session backup: format must be {FORMAT!r} with an integer version")
    if version not in READABLE:
        raise BadInput(f"backup version {validate.shown(version)} is not supported "
                       f"(this reads versions {', '.join(map(str, READABLE))})")
    keys = (_DOCUMENT_KEYS | ({_MEDIA_KEY, _TOOL_SETS_KEY} if version >= 2 else set())
            | ({_LABELS_KEY} if version >= 3 else set())
            | ({_BRANCH_NAMES_KEY, _PINS_KEY} if version >= 4 else set())
            | ({_TOOL_SET_VERSIONS_KEY} if version >= 5 else set()))
    doc = _fields(document, keys, "the document",
                  optional=(*INFORMATION_KEYS, _TOOL_SETS_KEY, _TOOL_SET_VERSIONS_KEY))
    session = _fields(doc["session"], _SESSION_KEYS, "session")
    session = {**session, "properties": _properties(session["properties"],
                                                    _where("session", session["properties"]))}
    nodes = _upgraded([_node(row, i, version) for i, row in enumerate(_list(doc, "nodes"))])
    session, nodes = _without_deleted_active(session, nodes)
    calls = [_call(row, i) for i, row in enumerate(_list(doc, "calls"))]
    media = [_medium(row, i) for i, row in enumerate(_list(doc, _MEDIA_KEY))] \
        if _MEDIA_KEY in doc else []
    found = records.problems(session["properties"], [n["properties"] for n in nodes],
                             [c["properties"] for c in calls], limits, outside)
    found += [p for medium in media for p in records.medium_problems(medium, limits)]
    node_ids = records.Named({n["properties"].get("id"): n["properties"].get("role")
                              for n in nodes}, outside)
    labels, branch_names, pins = (_held(doc, key) for key in (_LABELS_KEY, _BRANCH_NAMES_KEY,
                                                               _PINS_KEY))
    found += records.label_problems(labels, node_ids, limits)
    found += records.branch_name_problems(branch_names, node_ids, limits)
    found += records.pin_problems(pins, {n["properties"].get("id"): n["properties"]
                                         for n in nodes}, limits)
    if found:
        raise BadInput(_listed(found))
    _check_references(session, nodes, calls, outside)
    for call in calls:
        _check_reads(call, limits)
    nodes = _released([{**node, **_implied(node, limits)} for node in nodes])
    named_not_carried = _check_media(nodes, media)
    nodes = [_with_datetimes_as_text(node) for node in nodes]
    versions = _tool_set_versions(doc.get(_TOOL_SET_VERSIONS_KEY, []), node_ids)
    tool_sets = _tool_sets(doc.get(_TOOL_SETS_KEY, []), calls, versions)
    expected = {
        "nodes": len(nodes), "calls": len(calls),
        "predecessor": sum(n["predecessor_id"] is not None for n in nodes),
        "caller": sum(n["caller_id"] is not None for n in nodes),
        "covers": sum(len(n["covers"]) for n in nodes),
        "carries_over": sum(len(n[_CARRIES_KEY]) for n in nodes),
        "absorbed": sum(n["properties"].get("absorbed_id") is not None for n in nodes),
        "replaced": sum(n["properties"].get("replaced_id") is not None for n in nodes),
        "read": sum(len(c["reads"]) for c in calls),
        "produced": sum(c["produced_id"] is not None for c in calls),
        "root": 1, "head": 1, "active_summary": int(session["active_summary_id"] is not None),
        "tool_uses": sum(len(n["tool_uses"]) for n in nodes),
        "uses": sum(len(n["tool_uses"]) for n in nodes),
        "carries": sum(len(n["media_refs"]) for n in nodes),
        "offered": sum(c["properties"].get("tools_sha256") is not None for c in calls),
        "labeled": len(labels),
        "named": len(branch_names),
        "pinned": len(pins),
        "tool_set_versions": len(versions),
        "offers": sum(v["properties"].get("tools_sha256") is not None for v in versions),
    }
    nodes, referred = placed(nodes)
    return Checked({"session": session, "nodes": nodes, "referred": referred, "calls": calls,
                    "media": media, "tool_sets": tool_sets, "tool_set_versions": versions,
                    "labels": labels, "branch_names": branch_names, "pins": pins},
                   expected, named_not_carried)


def _held(doc: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """The document's `labels`, `branch_names` or `pins` ([] before its version had them):
    session relationships to its nodes, each a node and the relationship's properties."""
    if key not in doc:
        return []
    rows = [_fields(raw, {"node_id", "properties"}, f"{key}[{i}]")
            for i, raw in enumerate(_list(doc, key))]
    return [{"node_id": row["node_id"], "properties": _properties(row["properties"],
                                                                  f"{key}[{i}]")}
            for i, row in enumerate(rows)]


def _tool_set_versions(raw: Any, nodes: records.Named) -> list[dict[str, Any]]:
    """The session's tool set versions, numbered 1, 2, … in order, each anchored (if at
    all) at a node of the document that is no summary, its tool_choice a JSON object."""
    if not isinstance(raw, list):
        raise BadInput(f"{_TOOL_SET_VERSIONS_KEY} must be a list")
    versions = []
    for i, item in enumerate(raw):
        where = f"{_TOOL_SET_VERSIONS_KEY}[{i}]"
        row = _fields(item, {"properties"}, where)
        properties = _properties(row["properties"], where)
        unknown = sorted(set(properties) - _TOOL_SET_VERSION_KEYS)
        if unknown:
            raise BadInput(f"{where} has unknown properties {validate.some(unknown)}")
        if properties.get("version") != i + 1 or isinstance(properties.get("version"), bool):
            raise BadInput(f"{where}: version must be {i + 1} (versions are numbered in order)")
        if not isinstance(properties.get("created_at"), DateTime):
            raise BadInput(f"{where}: created_at must be a timestamp")
        anchor = properties.get("anchor_id")
        if anchor is not None and (anchor not in nodes or nodes.role(anchor) == "summary"):
            raise BadInput(f"{where}: anchor_id {validate.shown(anchor)} is not a turn of the "
                           "document")
        digest = properties.get("tools_sha256")
        if digest is not None and not isinstance(digest, str):
            raise BadInput(f"{where}: tools_sha256 must be a string")
        choice = properties.get("tool_choice")
        if choice is not None and not (
                isinstance(choice, str)
                and isinstance(validate.parse_json(choice, f"{where}.tool_choice"), dict)):
            raise BadInput(f"{where}: tool_choice must be a JSON object stored as text")
        versions.append({"properties": properties})
    return versions


def _tool_sets(raw: Any, calls: list[dict],
               versions: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The tools the document's calls were offered and its tool set versions offer: each
    once, its text under its sha256, a JSON list of tool definitions, and every call's
    and version's tools_sha256 among them."""
    if not isinstance(raw, list):
        raise BadInput(f"{_TOOL_SETS_KEY} must be a list")
    found = []
    for i, item in enumerate(raw):
        row = _fields(item, {"sha256", "tools"}, f"{_TOOL_SETS_KEY}[{i}]")
        where = f"{_TOOL_SETS_KEY}[{i}]"
        if not isinstance(row["tools"], str) or not isinstance(row["sha256"], str):
            raise BadInput(f"{where}: sha256 and tools must be strings")
        if hashlib.sha256(row["tools"].encode("utf-8")).hexdigest() != row["sha256"]:
            raise BadInput(f"{where}: tools do not hash to sha256 {validate.shown(row['sha256'])}")
        tools = validate.parse_json(row["tools"], f"{where}.tools")
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            raise BadInput(f"{where}.tools must be a JSON list of tool definitions")
        found.append({"sha256": row["sha256"], "tools": row["tools"]})
    carried = _unique([t["sha256"] for t in found], _TOOL_SETS_KEY)
    for call in calls:
        digest = call["properties"].get("tools_sha256")
        if digest is not None and digest not in carried:
            raise BadInput(f"{records.label('call', call['properties'])}: tools_sha256 "
                           f"{digest} is not among the document's {_TOOL_SETS_KEY}")
    for version in versions:
        digest = version["properties"].get("tools_sha256")
        if digest is not None and digest not in carried:
            raise BadInput(f"tool set version {version['properties']['version']}: "
                           f"tools_sha256 {digest} is not among the document's {_TOOL_SETS_KEY}")
    return found


def _with_datetimes_as_text(node: dict) -> dict:
    """A checked node row as nodes_import takes it: its timestamps apart, as ISO-8601 text
    under `datetimes` (Cypher's datetime() reads them back exactly), so the driver packs
    strings rather than a DateTime per node, which cost more than the nodes' writes."""
    properties, datetimes = {}, {}
    for key, value in node["properties"].items():
        if type(value) is records.Stamp:
            datetimes[key] = str(value)
        elif isinstance(value, DateTime):
            datetimes[key] = value.iso_format() + _zone_suffix(value.tzinfo)
        else:
            properties[key] = value
    return {**node, "properties": properties, "datetimes": datetimes}


def placed(rows: list[dict]) -> tuple[list[dict], list[str]]:
    """nodes_import's rows with each node they name placed, and the ids of the stored nodes
    they name: a node is placed at its index in the rows, or past them at its index in those
    ids (`*_at`: predecessor, caller, covers_last, absorbed, replaced; `at` on each edge of
    covers and carries_over)."""
    at = {row["properties"]["id"]: i for i, row in enumerate(rows)}
    referred: list[str] = []

    def place(node_id: Any) -> int | None:
        if node_id is None:
            return None
        if node_id not in at:
            at[node_id] = len(rows) + len(referred)
            referred.append(node_id)
        return at[node_id]

    def edges(listed: list[dict]) -> list[dict]:
        return [{**edge, "at": place(edge["node_id"])} for edge in listed] if listed else []

    return [{**row, "predecessor_at": place(row["predecessor_id"]),
             "caller_at": place(row["caller_id"]),
             "covers_last_at": place(row["properties"].get("covers_last_id")),
             "absorbed_at": place(row["properties"].get("absorbed_id")),
             "replaced_at": place(row["properties"].get("replaced_id")),
             "covers": edges(row["covers"]),
             _CARRIES_KEY: edges(row.get(_CARRIES_KEY, []))} for row in rows], referred


def _implied(node: dict, limits: Limits) -> dict[str, list[Any]]:
    """What the node's blocks imply (its ToolUse nodes, answers, media), as its import
    writes it; its blocks passed their rules already."""
    implied = records.implied_edges(node["properties"], limits)
    assert implied is not None, "records.problems refuses blocks that break a rule"
    return implied


def _check_media(nodes: list[dict], media: list[dict]) -> dict[str, str]:
    """Each medium of the document once and named by a node; returns the hashes the nodes
    name that the document does not carry, each with the first node naming it."""
    carried = _unique([m["sha256"] for m in media], "media")
    named: dict[str, str] = {}
    for node in nodes:
        for digest in node["media_refs"]:
            named.setdefault(digest, node["properties"]["id"])
    unnamed = sorted(carried - set(named))
    if unnamed:
        raise BadInput(f"media {validate.some(unnamed)}: no node of the document names it; "
                       "a backup carries only the media its nodes name")
    return {digest: node_id for digest, node_id in named.items() if digest not in carried}


def _not_carried(named_by: Mapping[str, str]) -> str:
    """What an export says of media a node names without a CARRIES edge to it."""
    return _listed([f"node {node_id} names media {digest} but does not carry it"
                    for digest, node_id in named_by.items()])


def _medium(raw: Any, index: int) -> dict[str, Any]:
    row = _fields(raw, set(records.MEDIUM_FIELDS), f"media[{index}]")
    return {key: row[key] for key in records.MEDIUM_FIELDS}


def _upgraded(nodes: list[dict]) -> list[dict]:
    """`nodes` with each summary of a LEGACY export in the shape migration 003 gives it.

    A legacy summary has no covers_new_count and lists its whole segment (covers_count
    entries). One that absorbed nothing newly covered all of it; one that absorbed a
    summary keeps the entries past the absorbed summary's covers_count, renumbered from 0,
    and (like the migration) names the absorbed summary as the one it replaced. Anything
    else is left as it is, for the rules and the invariant check to name.
    """
    by_id = {n["properties"].get("id"): n for n in nodes}
    upgraded = []
    for node in nodes:
        properties = node["properties"]
        covers_count = properties.get("covers_count")
        if (properties.get("role") != "summary" or "covers_new_count" in properties
                or not _is_count(covers_count) or len(node["covers"]) != covers_count):
            upgraded.append(node)
            continue
        absorbed_id = properties.get("absorbed_id")
        if absorbed_id is None:
            upgraded.append({**node, "properties": {**properties,
                                                    "covers_new_count": covers_count}})
            continue
        absorbed = by_id.get(absorbed_id) if isinstance(absorbed_id, str) else None
        absorbed_count = absorbed["properties"].get("covers_count") if absorbed else None
        if not _is_count(absorbed_count) or not 0 < absorbed_count < covers_count:
            upgraded.append(node)
            continue
        upgraded.append({
            **node,
            "properties": {**properties, "covers_new_count": covers_count - absorbed_count,
                           "replaced_id": properties.get("replaced_id", absorbed_id)},
            "covers": [{"node_id": edge["node_id"], "order": edge["order"] - absorbed_count}
                       for edge in node["covers"] if edge["order"] >= absorbed_count],
        })
    return upgraded


def _without_deleted_active(session: dict, nodes: list[dict]) -> tuple[dict, list[dict]]:
    """An export written before migration 007 may name a summary a branch deletion took as
    the session's active one: like the migration, the import leaves the session without an
    active summary and that summary superseded."""
    active_id = session["active_summary_id"]
    if not any(n["properties"].get("id") == active_id
               and n["properties"].get("role") == "summary"
               and n["properties"].get("deleted_at") is not None for n in nodes):
        return session, nodes
    return {**session, "active_summary_id": None}, [
        {**n, "properties": {**n["properties"], "superseded_summary": True}}
        if n["properties"].get("id") == active_id else n for n in nodes]


def _released(nodes: list[dict]) -> list[dict]:
    """A tool use id a live node holds is that node's: a tombstoned node holding it too
    gave it away (a grown transcript replaced it: service/store/transcripts.py), and its
    rows imply neither that tool use nor the answers to it."""
    live = {use["id"] for n in nodes if n["properties"].get("deleted_at") is None
            for use in n["tool_uses"]}
    released = {n["properties"].get("id") for n in nodes
                if n["properties"].get("deleted_at") is not None
                and any(use["id"] in live for use in n["tool_uses"])}
    if not released:
        return nodes
    return [{**n, "tool_uses": [], "answers": [], "answer_errors": []}
            if n["properties"].get("id") in released
            or (n["predecessor_id"] in released and n["properties"].get("deleted_at"))
            else n for n in nodes]


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_references(session: dict, nodes: list[dict], calls: list[dict],
                      outside: Mapping[str, str]) -> None:
    """Ids are unique, every record belongs to the session, and every edge ends at a node
    of the document (or of the session's nodes `outside` a part), never elsewhere."""
    session_id = session["properties"]["id"]
    own = _unique([n["properties"]["id"] for n in nodes], "node id")
    twice = [node_id for node_id in own if node_id in outside]
    if twice:
        raise BadInput(f"node id {validate.shown(min(twice))} is held twice")
    node_ids = records.Named(dict.fromkeys(own), outside)
    _unique([c["properties"]["id"] for c in calls], "call id")

    def known(node_id: Any, where: str, required: bool = False) -> None:
        if node_id is None and not required:
            return
        if not isinstance(node_id, str) or node_id not in node_ids:
            raise BadInput(f"{where} must name a node of the document, "
                           f"not {validate.shown(node_id)}")

    known(session["root_id"], "session.root_id", required=True)
    known(session["head_id"], "session.head_id", required=True)
    known(session["active_summary_id"], "session.active_summary_id")
    for kind, rows in (("node", nodes), ("call", calls)):
        for row in rows:
            where = records.label(kind, row["properties"])
            if row["properties"]["session_id"] != session_id:
                raise BadInput(f"{where} belongs to session {row['properties']['session_id']}, "
                               f"not to the document's {session_id}")
            for key in ("predecessor_id", "caller_id", "produced_id"):
                if key in row:
                    known(row[key], f"{where} {key}")
            for edge in row.get("covers", []) + row.get("reads", []):
                known(edge["node_id"], f"{where} {'covers' if kind == 'node' else 'reads'}")
            for edge in row.get(_CARRIES_KEY, []):
                known(edge["node_id"], f"{where} {_CARRIES_KEY}")


def _check_reads(call: dict, limits: Limits) -> None:
    """A call's reads, in prompt order, pass the rules of a call the API records."""
    properties = call["properties"]
    ordered = sorted(call["reads"], key=lambda edge: edge["position"])
    validate.read_ids([edge["node_id"] for edge in ordered], limits,
                      Purpose(properties["purpose"]), f"{records.label('call', properties)} reads")


def _node(raw: Any, index: int, version: int) -> dict[str, Any]:
    keys = _NODE_KEYS | ({_CARRIES_KEY} if version >= 4 else set())
    row = _fields(raw, keys, f"nodes[{index}]")
    where = _where("node", row["properties"], f"nodes[{index}]")
    return {"properties": _properties(row["properties"], where, stamps=True),
            "predecessor_id": row["predecessor_id"], "caller_id": row["caller_id"],
            "covers": _edges(row["covers"], f"{where} covers", "order"),
            _CARRIES_KEY: _edges(row.get(_CARRIES_KEY, []), f"{where} {_CARRIES_KEY}", "order")}


def _call(raw: Any, index: int) -> dict[str, Any]:
    row = _fields(raw, _CALL_KEYS, f"calls[{index}]")
    where = _where("call", row["properties"], f"calls[{index}]")
    return {"properties": _properties(row["properties"], where),
            "produced_id": row["produced_id"],
            "reads": _edges(row["reads"], f"{where} reads", "position")}


def _where(kind: str, properties: Any, place: str | None = None) -> str:
    """A record named by its id when it has one, else by its place in the document."""
    if isinstance(properties, dict) and isinstance(properties.get("id"), str):
        return records.label(kind, properties)
    return place or kind


def _edges(raw: Any, where: str, number: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise BadInput(f"{where} must be a list")
    edges = []
    for i, item in enumerate(raw):
        edge = _fields(item, {"node_id", number}, f"{where}[{i}]")
        validate.count(edge[number], f"{where}[{i}].{number}")
        edges.append({"node_id": edge["node_id"], number: edge[number]})
    return edges


def _properties(raw: Any, where: str, stamps: bool = False) -> dict[str, Any]:
    """`stamps`: a canonical timestamp is read as a records.Stamp (a node's, which its
    import writes as text: _with_datetimes_as_text), not as a DateTime."""
    if not isinstance(raw, dict) or not all(isinstance(k, str) and k for k in raw):
        raise BadInput(f"{where}.properties must be an object with non-empty string keys")
    return {key: value if _plain(value) else
            (stamps and _stamp(value)) or _decode(value, f"{where}: {_key(key)}")
            for key, value in raw.items() if key != "tenant"}


def _plain(value: Any) -> bool:
    """A value _decode keeps as it is (the most of a document's), told at a glance."""
    kind = type(value)
    return kind is str or kind is bool or kind is float or (
        kind is int and _MIN_INTEGER <= value <= validate.MAX_INTEGER)


def _key(key: str) -> str:
    plain = key.isidentifier() and len(key) <= validate.MAX_ID_LENGTH
    return key if plain else validate.shown(key)


def _decode(value: Any, where: str) -> Any:
    if isinstance(value, int) and not isinstance(value, bool) and not (
            _MIN_INTEGER <= value <= validate.MAX_INTEGER):
        raise BadInput(f"{where} is an integer beyond 64 bits, which Neo4j cannot store")
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list) and all(isinstance(v, (bool, int, float, str)) for v in value):
        return [_decode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get("datetime"), str):
        try:
            return _parse_datetime(value["datetime"])
        except (ValueError, TypeError, KeyError, OverflowError) as e:
            raise BadInput(f"{where} is not a valid datetime: {validate.shown(value['datetime'])}"
                           f" ({validate.shown(str(e))})") from None
    raise BadInput(f"{where} must be a string, number, boolean, a list of those or a "
                   f"timestamp like {{\"datetime\": \"2025-01-02T03:04:05.000000000+00:00\"}}")


def _parse_datetime(text: str) -> DateTime:
    """An offset gives a fixed offset (sent as one); a bracketed zone, that named zone."""
    canonical = _CANONICAL_STAMP.fullmatch(text)
    if canonical:  # as exports write them: built directly, 4 times faster than parsed
        year, month, day, hour, minute, second, fraction, offset = canonical.groups()
        return _dated(DateTime(int(year), int(month), int(day), int(hour), int(minute),
                               int(second), int(fraction.ljust(9, "0")) if fraction else 0,
                               tzinfo=_fixed_offset(offset)))
    stamp, _, zone = text.partition("[")
    value = _dated(DateTime.from_iso_format(stamp))
    if value.tzinfo is None:
        raise ValueError("an offset is required")
    if zone:
        import pytz  # the driver's own zone library (its zoneinfo path is unreliable)

        return value.astimezone(pytz.timezone(zone.removesuffix("]")))
    return value.replace(tzinfo=timezone(value.utcoffset()))


def _dated(value: DateTime) -> DateTime:
    """`value`, unless it is on the driver's ZeroDate (0000-00-00), which is no day."""
    if value.year == 0:
        raise ValueError("year 0 is out of range")
    return value


def _stamp(value: Any) -> records.Stamp | None:
    """A canonical timestamp ({"datetime": text}, as exports and transcripts' documents
    write them) as the text _with_datetimes_as_text makes of the DateTime _parse_datetime
    reads, once it passed what that and records' rule check; None for any other value,
    and for one in years 1 or 9999 or with an offset past ±18:00 (read as a DateTime,
    which names what is wrong)."""
    text = value.get("datetime") if type(value) is dict and len(value) == 1 else None
    canonical = _CANONICAL_STAMP.fullmatch(text) if type(text) is str and text.isascii() \
        else None
    if canonical is None:
        return None
    year, month, day, hour, minute, second, fraction, offset = canonical.groups()
    if year in ("0001", "9999") or offset[1:] > "18:00" or offset[4:] >= "60":
        return None
    try:  # a day, hour, minute or second out of range
        datetime(int(year), int(month), int(day), int(hour), int(minute), int(second))
    except ValueError:
        return None
    zone = "+00:00" if offset[1:] == "00:00" else offset
    return records.Stamp(f"{year}-{month}-{day}T{hour}:{minute}:{second}."
                         f"{(fraction or '').ljust(9, '0')}{zone}")


_CANONICAL_STAMP = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?([+-]\d\d:\d\d)")


@functools.lru_cache(maxsize=64)
def _fixed_offset(text: str) -> timezone:
    """'+02:00' as the fixed offset DateTime.from_iso_format's replace gives."""
    sign = -1 if text[0] == "-" else 1
    return timezone(sign * timedelta(hours=int(text[1:3]), minutes=int(text[4:6])))


# --- document shape -----------------------------------------------------------------------

def _fields(raw: Any, allowed: set[str], where: str,
            optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """`raw` as an object holding exactly the `allowed` fields (`optional` ones may be absent)."""
    if not isinstance(raw, dict):
        raise BadInput(f"{where} must be an object")
    unknown = sorted(validate.shown(k) for k in set(raw) - allowed)
    missing = sorted(allowed - set(optional) - set(raw))
    if unknown:
        raise BadInput(f"{where} has unknown fields {validate.some(unknown, PROBLEMS_NAMED)}")
    if missing:
        raise BadInput(f"{where} lacks the fields {missing}")
    return raw


def _list(doc: Mapping[str, Any], key: str) -> list[Any]:
    value = doc.get(key)
    if not isinstance(value, list):
        raise BadInput(f"the document's {key!r} must be a list")
    return value


def _unique(ids: list[str], kind: str) -> set[str]:
    seen: set[str] = set()
    for item in ids:
        if item in seen:
            raise BadInput(f"{kind} {item} appears twice in the document")
        seen.add(item)
    return seen
