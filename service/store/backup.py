"""Backup: one session as a JSON document, and the document back into the store.

The document (format "ctxdag-session", version 1):

    {"format": "ctxdag-session", "version": 1,
     "exported_at": ISO-8601, "source_tenant": str,      # information only, never imported
     "session": {"properties": {...}, "root_id": str, "head_id": str,
                 "active_summary_id": str | null},
     "nodes": [{"properties": {...}, "predecessor_id": str | null, "caller_id": str | null,
                "covers": [{"node_id": str, "order": int}, ...]}, ...],      # seq order
     "calls": [{"properties": {...}, "reads": [{"node_id": str, "position": int}, ...],
                "produced_id": str | null}, ...]}                            # start order

`properties` are every stored property except `tenant` (an import writes into the
importing tenant). Values are JSON scalars and lists; a temporal value is an object
with one key naming its type and an ISO-8601 string, nanoseconds and offset (and
zone, in brackets) included: {"datetime": "2025-01-02T03:04:05.123456789+00:00"}.

Export is one read statement. Import validates the whole document first, then is one
write statement in one transaction that refuses ids already in the store (of any
tenant) and checks the session's invariants on what it wrote: a failed check rolls
everything back, so an import leaves either the whole session or nothing.
"""
from __future__ import annotations

from datetime import timezone
from typing import Any, Callable, Mapping

from neo4j.time import Date, DateTime, Duration, Time

from ..errors import BadInput, Conflict, NotFound
from . import validate
from .db import Database, Rows
from .ids import utcnow
from .models import Purpose, Role

FORMAT = "ctxdag-session"
VERSION = 1
INFORMATION_KEYS = ("exported_at", "source_tenant")  # differ between exports of one session

_DOCUMENT_KEYS = {"format", "version", "session", "nodes", "calls", *INFORMATION_KEYS}
_SESSION_KEYS = {"properties", "root_id", "head_id", "active_summary_id"}
_NODE_KEYS = {"properties", "predecessor_id", "caller_id", "covers"}
_CALL_KEYS = {"properties", "reads", "produced_id"}

# Properties the ledger's readers rely on, with their types.
_SESSION_FIELDS = {"id": str, "next_seq": int, "created_at": DateTime, "updated_at": DateTime}
_NODE_FIELDS = {"id": str, "session_id": str, "role": str, "content": str, "tokens": int,
                "seq": int, "depth": int, "created_at": DateTime}
_CALL_FIELDS = {"id": str, "session_id": str, "purpose": str, "provider": str,
                "started_at": DateTime, "finished_at": DateTime}


# --- export -----------------------------------------------------------------------------

async def export_session(db: Database, tenant: str, session_id: str) -> dict:
    """The session of `tenant` as a JSON-serializable document (NotFound when there is none)."""
    validate.identifier(session_id, "session id")
    rows = await db.read("backup_export", session_id=session_id, tenant=tenant)
    if not rows:
        raise NotFound("session", session_id)
    row = rows[0]
    where = f"session {session_id}"
    document = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": utcnow().isoformat(),
        "source_tenant": tenant,
        "session": {
            "properties": _encode_properties(row["session"], where),
            "root_id": _one(row["root_ids"], f"{where} ROOT", required=True),
            "head_id": _one(row["head_ids"], f"{where} HEAD", required=True),
            "active_summary_id": _one(row["active_summary_ids"], f"{where} ACTIVE_SUMMARY"),
        },
        "nodes": [_export_node(node) for node in row["nodes"]],
        "calls": [_export_call(call) for call in row["calls"]],
    }
    try:
        _parse(document)  # what cannot be imported again is not a backup
    except BadInput as e:
        raise Conflict(f"{where} cannot be exported as it is stored: {e.message} "
                       f"(check it with `ctxdag check {session_id}`)") from e
    return document


def _export_node(node: Mapping[str, Any]) -> dict:
    where = f"node {node['properties'].get('id')}"
    return {
        "properties": _encode_properties(node["properties"], where),
        "predecessor_id": _one(node["predecessor_ids"], f"{where} PREDECESSOR"),
        "caller_id": _one(node["caller_ids"], f"{where} CALLER"),
        "covers": list(node["covers"]),
    }


def _export_call(call: Mapping[str, Any]) -> dict:
    where = f"call {call['properties'].get('id')}"
    return {
        "properties": _encode_properties(call["properties"], where),
        "reads": list(call["reads"]),
        "produced_id": _one(call["produced_ids"], f"{where} PRODUCED"),
    }


def _one(ids: list[str], what: str, required: bool = False) -> str | None:
    if len(ids) > 1 or (required and not ids):
        raise Conflict(f"{what}: {len(ids)} relationships where the ledger keeps "
                       f"{'exactly' if required else 'at most'} one; check the session")
    return ids[0] if ids else None


def _encode_properties(properties: Mapping[str, Any], where: str) -> dict:
    return {key: _encode(value, f"{where} property {key!r}")
            for key, value in sorted(properties.items()) if key != "tenant"}


def _encode(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [_encode(item, where) for item in value]
    if isinstance(value, DateTime):
        if value.tzinfo is None:
            return {"localdatetime": value.iso_format()}
        return {"datetime": value.iso_format() + _zone_suffix(value.tzinfo)}
    if isinstance(value, Date):
        return {"date": value.iso_format()}
    if isinstance(value, Time):
        return {"time" if value.tzinfo is not None else "localtime": value.iso_format()}
    if isinstance(value, Duration):
        return {"duration": value.iso_format()}
    raise Conflict(f"{where} holds a {type(value).__name__}, which a backup cannot carry")


def _zone_suffix(tz: Any) -> str:
    """'[Europe/Berlin]' for a named zone; nothing for an offset.

    The driver reads the offset +00:00 and the zone 'UTC' as the same pytz UTC, so
    UTC is written as the offset — which is what ctxdag stores (utcnow()).
    """
    zone = getattr(tz, "zone", None) or getattr(tz, "key", None)
    return f"[{zone}]" if isinstance(zone, str) and zone != "UTC" else ""


# --- import -----------------------------------------------------------------------------

async def import_session(db: Database, tenant: str, document: dict) -> str:
    """Rebuilds an exported session in `tenant`; returns its id.

    BadInput for a document that is not a well-formed version-1 export or that does
    not describe a sound session; Conflict when its session (or a node or call id)
    already exists in any tenant. Either way nothing is written.
    """
    params, expected = _parse(document)
    session_id = params["session"]["properties"]["id"]
    await db.write("backup_import", _import_check(session_id, expected), tenant=tenant,
                   **params)
    return session_id


def _import_check(session_id: str, expected: dict[str, int]) -> Callable[[Rows], None]:
    """Runs inside the import's transaction: raising rolls the whole import back."""

    def check(rows: Rows) -> None:
        row = rows[0]
        if row["problem"] == "session_exists":
            raise Conflict(f"session {session_id} already exists", session_id=session_id)
        if row["problem"] is not None:
            taken = ", ".join(row["taken_ids"][:5])
            raise Conflict(f"session {session_id} cannot be imported: "
                           f"ids already exist ({taken})")
        if row["created"] != expected:
            raise Conflict(f"importing session {session_id} gave {row['created']}, not the "
                           f"document's {expected}: nodes or calls of that session id were "
                           "left in the store without their session")
        if row["violations"]:
            raise BadInput("the document does not describe a sound session: "
                           + "; ".join(row["violations"][:5]))

    return check


def _parse(document: Any) -> tuple[dict[str, Any], dict[str, int]]:
    """The import statement's parameters, and what it must create; BadInput if malformed."""
    doc = _fields(document, _DOCUMENT_KEYS, "the document", optional=INFORMATION_KEYS)
    if doc["format"] != FORMAT or type(doc["version"]) is not int:
        raise BadInput(f"not a session backup: format must be {FORMAT!r} with an integer version")
    if doc["version"] != VERSION:
        raise BadInput(f"backup version {doc['version']} is not supported (this is {VERSION})")
    session = _fields(doc["session"], _SESSION_KEYS, "session")
    session = {**session, "properties": _properties(session["properties"], "session",
                                                    _SESSION_FIELDS)}
    session_id = session["properties"]["id"]
    nodes = [_node(row, f"nodes[{i}]", session_id) for i, row in enumerate(_list(doc, "nodes"))]
    calls = [_call(row, f"calls[{i}]", session_id) for i, row in enumerate(_list(doc, "calls"))]
    _check_references(session, nodes, calls)
    expected = {
        "nodes": len(nodes), "calls": len(calls),
        "predecessor": sum(n["predecessor_id"] is not None for n in nodes),
        "caller": sum(n["caller_id"] is not None for n in nodes),
        "covers": sum(len(n["covers"]) for n in nodes),
        "read": sum(len(c["reads"]) for c in calls),
        "produced": sum(c["produced_id"] is not None for c in calls),
        "root": 1, "head": 1, "active_summary": int(session["active_summary_id"] is not None),
    }
    return {"session": session, "nodes": nodes, "calls": calls}, expected


def _check_references(session: dict, nodes: list[dict], calls: list[dict]) -> None:
    """Ids are unique, and every edge ends at a node of the document, never outside it."""
    node_ids = _unique([n["properties"]["id"] for n in nodes], "node")
    _unique([c["properties"]["id"] for c in calls], "call")

    def known(node_id: Any, where: str, required: bool = False) -> None:
        if node_id is None and not required:
            return
        if not isinstance(node_id, str) or node_id not in node_ids:
            raise BadInput(f"{where} must name a node of the document, not {node_id!r}")

    known(session["root_id"], "session.root_id", required=True)
    known(session["head_id"], "session.head_id", required=True)
    known(session["active_summary_id"], "session.active_summary_id")
    for node in nodes:
        where = f"node {node['properties']['id']}"
        known(node["predecessor_id"], f"{where} predecessor_id")
        known(node["caller_id"], f"{where} caller_id")
        for edge in node["covers"]:
            known(edge["node_id"], f"{where} covers")
    for call in calls:
        where = f"call {call['properties']['id']}"
        known(call["produced_id"], f"{where} produced_id")
        for edge in call["reads"]:
            known(edge["node_id"], f"{where} reads")


def _node(raw: Any, where: str, session_id: str) -> dict[str, Any]:
    row = _fields(raw, _NODE_KEYS, where)
    properties = _properties(row["properties"], where, _NODE_FIELDS)
    _belongs(properties, where, session_id)
    try:
        Role(properties["role"])
    except ValueError:
        raise BadInput(f"{where} has an unknown role {properties['role']!r}") from None
    return {"properties": properties, "predecessor_id": row["predecessor_id"],
            "caller_id": row["caller_id"],
            "covers": _edges(row["covers"], f"{where} covers", "order")}


def _call(raw: Any, where: str, session_id: str) -> dict[str, Any]:
    row = _fields(raw, _CALL_KEYS, where)
    properties = _properties(row["properties"], where, _CALL_FIELDS)
    _belongs(properties, where, session_id)
    try:
        Purpose(properties["purpose"])
    except ValueError:
        raise BadInput(f"{where} has an unknown purpose {properties['purpose']!r}") from None
    return {"properties": properties, "produced_id": row["produced_id"],
            "reads": _edges(row["reads"], f"{where} reads", "position")}


def _belongs(properties: Mapping[str, Any], where: str, session_id: str) -> None:
    if properties["session_id"] != session_id:
        raise BadInput(f"{where} belongs to session {properties['session_id']!r}, "
                       f"not to the document's {session_id!r}")


def _edges(raw: Any, where: str, number: str) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        raise BadInput(f"{where} must be a list")
    edges = []
    for i, item in enumerate(raw):
        edge = _fields(item, {"node_id", number}, f"{where}[{i}]")
        if type(edge[number]) is not int:
            raise BadInput(f"{where}[{i}].{number} must be an integer")
        edges.append({"node_id": edge["node_id"], number: edge[number]})
    return edges


def _properties(raw: Any, where: str, fields: Mapping[str, type]) -> dict[str, Any]:
    if not isinstance(raw, dict) or not all(isinstance(k, str) and k for k in raw):
        raise BadInput(f"{where}.properties must be an object with non-empty string keys")
    properties = {key: _decode(value, f"{where} property {key!r}")
                  for key, value in raw.items() if key != "tenant"}
    for key, kind in fields.items():
        value = properties.get(key)
        if not isinstance(value, kind) or isinstance(value, bool) or (
                kind is DateTime and value.tzinfo is None):
            raise BadInput(f"{where} property {key!r} must be a {_KIND_NAMES[kind]}")
    validate.identifier(properties["id"], f"{where} id")
    return properties


_KIND_NAMES = {str: "string", int: "integer", DateTime: "datetime with an offset or zone"}


def _decode(value: Any, where: str) -> Any:
    if isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        items = [_decode(item, where) for item in value]
        if any(isinstance(item, list) for item in items):
            raise BadInput(f"{where} nests lists, which Neo4j cannot store")
        return items
    if isinstance(value, dict) and len(value) == 1:
        (kind, text), = value.items()
        parse = _TEMPORALS.get(kind)
        if parse is not None and isinstance(text, str):
            try:
                return parse(text)
            except (ValueError, TypeError, KeyError, OverflowError) as e:
                raise BadInput(f"{where} is not a valid {kind}: {text!r} ({e})") from None
    raise BadInput(f"{where} must be a string, number, boolean, list or temporal object "
                   f"like {{\"datetime\": \"2025-01-02T03:04:05.000000000+00:00\"}}")


def _parse_datetime(text: str) -> DateTime:
    """An offset gives a fixed offset (sent as one); a bracketed zone, that named zone."""
    stamp, _, zone = text.partition("[")
    value = _zoned(DateTime.from_iso_format, True)(stamp)
    if zone:
        import pytz  # the driver's own zone library (its zoneinfo path is unreliable)

        return value.astimezone(pytz.timezone(zone.removesuffix("]")))
    return value.replace(tzinfo=timezone(value.utcoffset()))


def _zoned(parse: Callable[[str], Any], offset: bool) -> Callable[[str], Any]:
    """`parse`, refusing a value with an offset where none belongs, or the reverse."""

    def parse_checked(text: str) -> Any:
        value = parse(text)
        if (value.tzinfo is not None) != offset:
            raise ValueError("an offset is required" if offset else "an offset is not allowed")
        return value

    return parse_checked


_TEMPORALS: dict[str, Callable[[str], Any]] = {
    "datetime": _parse_datetime,
    "localdatetime": _zoned(DateTime.from_iso_format, False),
    "date": Date.from_iso_format,
    "time": _zoned(Time.from_iso_format, True),
    "localtime": _zoned(Time.from_iso_format, False),
    "duration": Duration.from_iso_format,
}


# --- document shape -----------------------------------------------------------------------

def _fields(raw: Any, allowed: set[str], where: str,
            optional: tuple[str, ...] = ()) -> dict[str, Any]:
    """`raw` as an object holding exactly the `allowed` fields (`optional` ones may be absent)."""
    if not isinstance(raw, dict):
        raise BadInput(f"{where} must be an object")
    unknown = sorted(set(raw) - allowed)
    missing = sorted(allowed - set(optional) - set(raw))
    if unknown:
        raise BadInput(f"{where} has unknown fields {unknown}")
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
            raise BadInput(f"{kind} id {item!r} appears twice in the document")
        seen.add(item)
    return seen
