"""What each stored record may hold: the API's rules (validate.py) applied to properties.

An import runs `problems` on its document before it writes anything, and `ctxdag
check` runs it on what is stored, so both refuse exactly what the API refuses. A
property the ledger never writes is a problem too. Each problem names the record
and the property.

A node's blocks also imply edges the writes derive from them (`implied_edges`: its
ToolUse nodes, the is_error of its ANSWERS, the media it CARRIES): an import writes
them from it, and check compares what is stored with it (`edge_problems`). A medium
(`medium_problems`) holds its data as the API stores it, under the hash of that data.
"""
from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import re
from typing import Any, Callable, Container, Iterable, Mapping, Sequence

from neo4j.time import DateTime

from ..errors import BadInput
from ..model import blocks, redaction, validate
from ..model.models import Purpose, Role
from ..model.validate import Limits

Record = Mapping[str, Any]
Rule = Callable[[Any, Record, Limits, str], object]  # raises BadInput


class Stamp(str):
    """A node's timestamp read as the ISO-8601 text its import writes, never built as the
    driver's DateTime (backup.py makes one of a canonical timestamp only once it passed
    what _datetime checks): building, checking and printing those DateTimes again was
    about a third of a transcript's first-import check."""

    __slots__ = ()


def _datetime(value: Any, record: Record, limits: Limits, what: str) -> None:
    if type(value) is Stamp:
        return
    if not isinstance(value, DateTime):
        raise BadInput(f"{what} must be a datetime with an offset or zone")
    validate.timestamp(value, what)


def _identifier(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.identifier(value, what)


def _count(minimum: int) -> Rule:
    return lambda value, record, limits, what: validate.count(value, what, minimum)


def _flag(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.flag(value, what)


def _marked(value: Any, record: Record, limits: Limits, what: str) -> None:
    if value is not True:  # stored only when set: absent, never false
        raise BadInput(f"{what} must be true when stored")


def _strategy(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.summary_strategy(value, what)


def _identifiers(value: Any, record: Record, limits: Limits, what: str) -> None:
    if not isinstance(value, (list, tuple)):
        raise BadInput(f"{what} must be a list of ids")
    for i, item in enumerate(value):
        validate.identifier(item, f"{what}[{i}]")


def _name(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.name(value, what)


def _json_object(value: Any, record: Record, limits: Limits, what: str) -> None:
    if (value, limits) not in _made_objects:
        validate.stored_json_object(value, limits, what)


def _extra_meta(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.extra_meta(validate.stored_json_object(value, limits, what), limits, what)


def _role(value: Any, record: Record, limits: Limits, what: str) -> None:
    role = validate.enum_value(Role, value, what)
    if (role is Role.SYSTEM) != (record.get("depth") == 0):
        raise BadInput(f"{what} is {role.value!r} at depth {validate.shown(record.get('depth'))}"
                       "; the ROOT (depth 0) and only the ROOT is a system node")


def _content(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.content(value, limits, what, allow_empty=record.get("role") == Role.SYSTEM.value)


def _tokens(value: Any, record: Record, limits: Limits, what: str) -> None:
    stored = _sound_blocks(record, limits)
    if stored is None:
        return  # the blocks' (or the content's) own rule names what is wrong
    expected = blocks.estimate(stored)
    if value != expected or isinstance(value, bool):
        raise BadInput(f"{what} is {validate.shown(value)}, not the estimate of "
                       f"{'its blocks' if 'blocks' in record else 'the content'} ({expected})")


def _sound_blocks(record: Record, limits: Limits) -> tuple[blocks.Block, ...] | None:
    """A node's blocks (a plain-text node's content as one text block); None when they
    break a rule, which the rule of `blocks` (or of `content`) names."""
    if record.get("blocks") is None:
        content = record.get("content")
        return (blocks.Text(content),) if isinstance(content, str) else None
    try:
        return _blocks_of(record["blocks"], record, limits, "blocks")
    except BadInput:
        return None


def _blocks_of(value: Any, record: Record, limits: Limits, what: str
               ) -> tuple[blocks.Block, ...]:
    if not isinstance(value, str):
        raise BadInput(f"{what} must be content blocks stored as JSON text")
    return _checked_blocks(value, str(record.get("role")), limits, what)


# Stored blocks a writer made itself, from blocks it parsed by these same rules (a
# transcript's document, service/transcripts/document.py): the text -> what parsing it gives.
_made: dict[tuple[str, str, Limits], tuple[blocks.Block, ...]] = {}
_MADE_HELD = 100_000


def made_blocks(value: str, role: str, limits: Limits, parsed: blocks.Parsed) -> None:
    """Notes that `value` is the stored form (blocks.dumps) of `parsed`, blocks of a
    `role` message that passed blocks.parse under `limits` and carry no media data, so a
    document's check takes them as parsed instead of parsing them again (until
    forget_checked_blocks)."""
    if parsed.media or parsed.plain_text is not None:
        return  # their stored form is not what was parsed: checked as any other
    if len(_made) >= _MADE_HELD:
        _made.clear()  # documents read but never checked (a followed file held already)
    _made[(value, role, limits)] = parsed.blocks


# JSON objects a writer stored as validate.json_object gave them under these limits (a
# transcript's node metadata): their rule holds by construction.
_made_objects: set[tuple[str, Limits]] = set()


def made_json_object(value: Mapping[str, Any], limits: Limits, what: str) -> str:
    """validate.json_object's text of `value`, noted as made so a document's check does
    not parse it again (until forget_checked_blocks)."""
    text = validate.json_object(value, limits, what)
    if len(_made_objects) >= _MADE_HELD:
        _made_objects.clear()  # documents read but never checked
    _made_objects.add((text, limits))
    return text


def forget_made(rows: Iterable[Mapping[str, Any]], limits: Limits) -> None:
    """Drops what made_blocks and made_json_object noted of these node rows (their
    `properties`), which their writer does not check: a grown file's rows it holds
    already (service/store/transcript_growth.py)."""
    for row in rows:
        properties = row["properties"]
        if isinstance(properties.get("blocks"), str):
            _made.pop((properties["blocks"], str(properties.get("role")), limits), None)
        if isinstance(properties.get("metadata"), str):
            _made_objects.discard((properties["metadata"], limits))


def _checked_blocks(value: str, role: str, limits: Limits, what: str
                    ) -> tuple[blocks.Block, ...]:
    made = _made.get((value, role, limits))
    return made if made is not None else _parsed_blocks(value, role, limits, what)


# A node's rules read its blocks three to four times (content, tokens, ids, implied edges,
# the last in a pass of its own over a document's nodes): parsed once while a document is
# checked (backup.py clears them after). Blocks that break a rule raise again each time.
@functools.lru_cache(maxsize=16_384)
def _parsed_blocks(value: str, role: str, limits: Limits, what: str
                   ) -> tuple[blocks.Block, ...]:
    parsed = blocks.parse(validate.parse_json(value, what), role, limits, what)
    if parsed.media:
        raise BadInput(f"{what} carry media data; stored blocks name media by hash")
    if parsed.plain_text is not None:
        raise BadInput(f"{what} are one text block; the ledger stores that as content alone")
    if blocks.dumps(parsed.blocks) != value:
        raise BadInput(f"{what} are not in the form the ledger writes them (compact JSON, "
                       "keys sorted)")
    return parsed.blocks


def forget_checked_blocks() -> None:
    """Drops the blocks parsed while a document was checked, and the blocks and JSON
    objects noted as made (their text included)."""
    _parsed_blocks.cache_clear()
    _made.clear()
    _made_objects.clear()


def _blocks(value: Any, record: Record, limits: Limits, what: str) -> None:
    stored = _blocks_of(value, record, limits, what)
    if record.get("content") != blocks.text_of(stored):
        raise BadInput(f"content is not the text of the node's {what}")
    for key, ids in (("tool_use_ids", blocks.tool_use_ids(stored)),
                     ("answered_ids", blocks.answered_ids(stored))):
        if ids and key not in record:
            raise BadInput(f"{key} is missing: the node's {what} name {validate.some(ids)}")


def _thinking(value: Any, record: Record, limits: Limits, what: str) -> None:
    """The text of the node's thinking blocks, which search reads (derived, never given)."""
    stored = _sound_blocks(record, limits)
    if stored is not None and value != blocks.thinking_of(stored):
        raise BadInput(f"{what} is not the text of the node's thinking blocks")


def _ids_of_blocks(ids_in: Callable[[Sequence[blocks.Block]], list[str]], kind: str) -> Rule:
    """A list property restating the ids the node's blocks name (never empty when stored)."""

    def rule(value: Any, record: Record, limits: Limits, what: str) -> None:
        stored = _sound_blocks(record, limits)
        listed = isinstance(value, (list, tuple)) and bool(value)
        if not listed or (stored is not None and list(value) != ids_in(stored)):
            raise BadInput(f"{what} {validate.shown(value)} are not the ids of the node's "
                           f"{kind} blocks")

    return rule


def _redacted_at(value: Any, record: Record, limits: Limits, what: str) -> None:
    """A redacted node holds its blocks in the redacted form (model/redaction.py) and says why."""
    _datetime(value, record, limits, what)
    if "redaction_reason" not in record:
        raise BadInput("redaction_reason is missing: a redacted node says why it was redacted")
    stored = _sound_blocks(record, limits)
    if stored is not None and not redaction.is_redacted_form(stored):
        raise BadInput(f"the node is redacted ({what} is set) but holds content other than "
                       f"the redaction marker {redaction.MARKER!r}")


def _redaction_reason(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.redaction_reason(value, what)
    if "redacted_at" not in record:
        raise BadInput(f"{what} is set on a node that is not redacted (no redacted_at)")


def _redacted_media(value: Any, record: Record, limits: Limits, what: str) -> None:
    if "redacted_at" not in record:
        raise BadInput(f"{what} is set on a node that is not redacted (no redacted_at)")
    media = validate.parse_json(value, what) if isinstance(value, str) else None
    try:
        refs = [blocks.MediaRef(m["media_type"], m["sha256"], m["bytes"]) for m in media]
    except (TypeError, KeyError):
        refs = None
    if not refs or any(not _SHA256.match(str(m.sha256)) or type(m.bytes) is not int
                       or m.bytes < 1 for m in refs) or redaction.media_json(refs) != value:
        raise BadInput(f"{what} must be the media the node named, as the ledger writes them "
                       "(compact JSON of {sha256, media_type, bytes}, in hash order)")


def _instructions(value: Any, record: Record, limits: Limits, what: str) -> None:
    if value is None:  # stored only when given: absent, never null
        raise BadInput(f"{what} must be a string")
    validate.instructions(value, what)


def _purpose(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.enum_value(Purpose, value, what)


def _read_count(value: Any, record: Record, limits: Limits, what: str) -> None:
    purpose = record.get("purpose")
    validate.read_count(value, limits, Purpose.EXTERNAL if purpose == Purpose.EXTERNAL.value
                        else Purpose.CHAT, what)


def _shared_reads(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.count(value, what)
    if isinstance(record.get("read_count"), int) and value > record["read_count"]:
        raise BadInput(f"{what} is {value}, more than the call's {record['read_count']} reads")


def _sha256(value: Any, record: Record, limits: Limits, what: str) -> None:
    if not isinstance(value, str) or len(value) != 64 or value.strip("0123456789abcdef"):
        raise BadInput(f"{what} must be 64 lowercase hex digits")


def _error_message(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.error_message(value, limits, what)


REQUIRED, OPTIONAL = True, False

SESSION: dict[str, tuple[bool, Rule]] = {
    "id": (REQUIRED, _identifier),
    "title": (OPTIONAL, lambda value, record, limits, what: validate.title(value, what)),
    "extra_meta": (REQUIRED, _extra_meta),
    "created_at": (REQUIRED, _datetime),
    "updated_at": (REQUIRED, _datetime),
    "next_seq": (REQUIRED, _count(1)),
    "summary_strategy": (OPTIONAL, _strategy),
    "recall": (OPTIONAL, _flag),
    "summary_version": (OPTIONAL, _count(0)),
    "meta_version": (OPTIONAL, _count(0)),
    "next_event_seq": (OPTIONAL, _count(0)),
    "events_pruned_through": (OPTIONAL, _count(0)),
    # Where an imported session came from (service/transcripts/origin.py), and the file's
    # text as it was imported: its size in bytes and their sha256 (a file still holding
    # them is recognised without reading it: service/store/transcripts.py, fingerprint).
    "source": (OPTIONAL, _json_object),
    # What a session list shows and filters (service/model/listing.py).
    "tool": (OPTIONAL, _name),
    "tool_version": (OPTIONAL, _name),
    "project": (OPTIONAL, lambda value, record, limits, what: validate.path(value, what)),
    "git_branch": (OPTIONAL, _name),
    "models": (OPTIONAL, lambda value, record, limits, what: validate.names(value, what)),
    "source_file": (OPTIONAL, lambda value, record, limits, what: validate.path(value, what)),
    "first_activity_at": (OPTIONAL, _datetime),
    "last_activity_at": (OPTIONAL, _datetime),
    "source_bytes": (OPTIONAL, _count(0)),
    "source_prefix_sha256": (OPTIONAL, _sha256),
}

NODE: dict[str, tuple[bool, Rule]] = {
    "id": (REQUIRED, _identifier),
    "session_id": (REQUIRED, _identifier),
    "role": (REQUIRED, _role),
    "content": (REQUIRED, _content),
    "created_at": (REQUIRED, _datetime),
    "tokens": (REQUIRED, _tokens),
    "metadata": (REQUIRED, _json_object),
    "seq": (REQUIRED, _count(0)),
    "depth": (REQUIRED, _count(0)),
    "side_branch": (REQUIRED, _flag),
    "deleted_at": (OPTIONAL, _datetime),
    "blocks": (OPTIONAL, _blocks),
    "redacted_at": (OPTIONAL, _redacted_at),
    "redaction_reason": (OPTIONAL, _redaction_reason),
    "redacted_media": (OPTIONAL, _redacted_media),
    # An imported node's mapping from its source, hashed (service/transcripts/document.py):
    # a grown file finds the nodes it now maps otherwise without reading them back.
    "source_digest": (OPTIONAL, _sha256),
}

FORK = {"fork_of": (OPTIONAL, _identifier)}
# A reply an import keeps out of every render (docs/guides/importing-sessions.md), and
# the tool message answering it.
OUT_OF_CONTEXT = {"out_of_context": (OPTIONAL, _marked)}

NODE_BY_ROLE: dict[str, dict[str, tuple[bool, Rule]]] = {
    Role.SYSTEM.value: NODE,
    Role.USER.value: {**NODE, **FORK},
    Role.ASSISTANT.value: {
        **NODE, **FORK, **OUT_OF_CONTEXT,
        "tool_use_ids": (OPTIONAL, _ids_of_blocks(blocks.tool_use_ids, "tool_use")),
        "thinking": (OPTIONAL, _thinking)},
    Role.TOOL.value: {
        **NODE, **OUT_OF_CONTEXT,
        "answered_ids": (OPTIONAL, _ids_of_blocks(blocks.answered_ids, "tool_result"))},
    Role.SUMMARY.value: {
        **NODE,
        "strategy": (REQUIRED, _strategy),
        "superseded_summary": (REQUIRED, _flag),
        "absorbed_id": (OPTIONAL, _identifier),
        "covers_count": (REQUIRED, _count(1)),
        "covers_new_count": (REQUIRED, _count(1)),
        "covers_first_id": (REQUIRED, _identifier),
        "covers_last_id": (REQUIRED, _identifier),
        "instructions": (OPTIONAL, _instructions),
        # Absent on summaries written before the summary strategies (README): those
        # compacted no recorded head and replaced no recorded summary.
        "compacted_head_id": (OPTIONAL, _identifier),
        "retained_ids": (OPTIONAL, _identifiers),
        "replaced_id": (OPTIONAL, _identifier),
        "retired_at": (OPTIONAL, _datetime),
        # A nested summary's merged summaries, chain order (segmented; docs/segmented.md).
        "nested_ids": (OPTIONAL, _identifiers),
    },
    Role.CARRY.value: {
        **NODE,
        "carried_from_id": (REQUIRED, _identifier),
        "carried_count": (REQUIRED, _count(1)),
        "instructions": (OPTIONAL, _instructions),
    },
}

CALL: dict[str, tuple[bool, Rule]] = {
    "id": (REQUIRED, _identifier),
    "session_id": (REQUIRED, _identifier),
    "purpose": (REQUIRED, _purpose),
    "provider": (REQUIRED, _name),
    "model": (OPTIONAL, _name),
    "head_id": (OPTIONAL, _identifier),
    "started_at": (REQUIRED, _datetime),
    "finished_at": (REQUIRED, _datetime),
    "input_tokens": (OPTIONAL, _count(0)),
    "output_tokens": (OPTIONAL, _count(0)),
    "error_code": (OPTIONAL, _name),
    "error_message": (OPTIONAL, _error_message),
    "read_count": (REQUIRED, _read_count),
    "tools_sha256": (OPTIONAL, _sha256),
    "cache_creation_input_tokens": (OPTIONAL, _count(0)),
    "cache_read_input_tokens": (OPTIONAL, _count(0)),
    "previous_call_id": (OPTIONAL, _identifier),
    "shared_prefix_reads": (OPTIONAL, _shared_reads),
    "shared_prefix_tokens": (OPTIONAL, _count(0)),
    "prompt_tokens": (OPTIONAL, _count(0)),
    "recalled_reads": (OPTIONAL, _shared_reads),
}

def _label_text(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.label(value, what)


def _branch_name(value: Any, record: Record, limits: Limits, what: str) -> None:
    validate.branch_name(value, what)


# A node's label: the properties of its session's LABELED relationship to it.
LABEL: dict[str, tuple[bool, Rule]] = {
    "text": (REQUIRED, _label_text),
    "labeled_at": (REQUIRED, _datetime),
}

# A branch's name: the properties of its session's NAMES relationship to the branch's tip.
BRANCH_NAME: dict[str, tuple[bool, Rule]] = {
    "name": (REQUIRED, _branch_name),
    "named_at": (REQUIRED, _datetime),
}


def label_problems(labels: Sequence[Record], node_ids: Container[str],
                   limits: Limits) -> list[str]:
    """Labels ({node_id, properties}) that the API could not have written: a bad text or
    time, a node not of the session, a node labeled twice."""
    return _held_by_node("label", "has two labels; the ledger keeps one", LABEL, labels,
                         node_ids, limits)


def branch_name_problems(names: Sequence[Record], node_ids: Container[str],
                         limits: Limits) -> list[str]:
    """Branch names ({node_id, properties}) that the API could not have written: a bad name
    or time, a node not of the session, a tip named twice, a name given to two branches.
    (That the node is a live branch tip is a storage invariant: check_session_invariants.)"""
    found = _held_by_node("branch name", "has two names; the ledger keeps one", BRANCH_NAME,
                          names, node_ids, limits)
    tips_by_name: dict[Any, list[str]] = {}
    for entry in names:
        tips_by_name.setdefault(entry["properties"].get("name"), []).append(entry["node_id"])
    return found + [f"branch name {validate.shown(name)}: names {len(tips)} branches "
                    f"({', '.join(map(validate.shown, tips))}); a name names one"
                    for name, tips in tips_by_name.items() if len(tips) > 1]


def _held_by_node(kind: str, twice: str, rules: dict[str, tuple[bool, Rule]],
                  entries: Sequence[Record], node_ids: Container[str],
                  limits: Limits) -> list[str]:
    found, seen = [], set()
    for entry in entries:
        node_id = entry.get("node_id")
        where = f"{kind} of node {validate.shown(node_id)}"
        if node_id not in node_ids:
            found.append(f"{where}: the node is not a node of this session")
        elif node_id in seen:
            found.append(f"{where}: the node {twice}")
        seen.add(node_id)
        found += [f"{where}{p.removeprefix(f'{kind} x')}" for p in
                  record_problems(kind, {"id": "x", **entry["properties"]},
                                  {"id": (REQUIRED, _identifier), **rules}, limits)]
    return found


# A node's pin: the properties of its session's PINNED relationship to it.
PIN: dict[str, tuple[bool, Rule]] = {
    "pinned_at": (REQUIRED, _datetime),
}


def pin_problems(pins: Sequence[Record], nodes: Mapping[str, Record],
                 limits: Limits) -> list[str]:
    """Pins ({node_id, properties}) that the API could not have written: a bad time, a node
    not of the session, ROOT (the only system node) or a summary, a node pinned twice.
    `nodes`: the session's nodes' properties by id."""
    found, seen = [], set()
    for entry in pins:
        node_id = entry.get("node_id")
        where = f"pin of node {validate.shown(node_id)}"
        node = nodes.get(node_id)
        if node is None:
            found.append(f"{where}: the node is not a node of this session")
        elif node.get("role") in ("system", "summary"):
            what = "ROOT" if node.get("role") == "system" else "a summary"
            found.append(f"{where}: the node is {what}; only conversation turns are pinned")
        elif node_id in seen:
            found.append(f"{where}: the node is pinned twice; the ledger keeps one pin")
        seen.add(node_id)
        found += [f"{where}{p.removeprefix('pin x')}" for p in
                  record_problems("pin", {"id": "x", **entry["properties"]},
                                  {"id": (REQUIRED, _identifier), **PIN}, limits)]
    return found


# Properties that name another node of the same session (a list property names several),
# and those of them that must name a summary.
NODE_REFERENCES = ("fork_of", "absorbed_id", "replaced_id", "compacted_head_id", "retained_ids",
                   "carried_from_id", "nested_ids")
CALL_REFERENCES = ("head_id",)
SUMMARY_REFERENCES = ("absorbed_id", "replaced_id", "nested_ids")


def label(kind: str, record: Record) -> str:
    """'node nod_…', naming the record by its id however odd that id is."""
    record_id = record.get("id")
    plain = isinstance(record_id, str) and 0 < len(record_id) <= validate.MAX_ID_LENGTH
    return f"{kind} {record_id if plain else validate.shown(record_id)}"


def record_problems(kind: str, record: Record, fields: Mapping[str, tuple[bool, Rule]],
                    limits: Limits) -> list[str]:
    where = label(kind, record)
    found = [f"{where}: {key} is not a property the ledger writes on a {kind}"
             for key in sorted(set(record) - set(fields))]
    for key, (required, rule) in fields.items():
        if key not in record:
            if required:
                found.append(f"{where}: {key} is missing")
            continue
        try:
            rule(record[key], record, limits, key)
        except BadInput as e:
            found.append(f"{where}: {e.message}")
    return found


def node_problems(node: Record, limits: Limits) -> list[str]:
    role = node.get("role")
    fields = NODE_BY_ROLE.get(role, NODE) if isinstance(role, str) else NODE
    return record_problems("node", node, fields, limits)


class Named:
    """The node ids a document's records may name: its own nodes' (id -> role) and the
    session's others `outside` it (a part's: transcript_parts.py), each looked up where it
    is, so that checking a part costs what the part holds, not what the session holds."""

    __slots__ = ("own", "outside")

    def __init__(self, own: Mapping[str, Any], outside: Mapping[str, str]) -> None:
        self.own, self.outside = own, outside

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.own or node_id in self.outside

    def role(self, node_id: str) -> Any:
        return self.own[node_id] if node_id in self.own else self.outside.get(node_id)


def reference_problems(nodes: Sequence[Record], calls: Sequence[Record],
                       outside: Mapping[str, str] | None = None) -> list[str]:
    named = Named({n["id"]: n.get("role") for n in nodes if isinstance(n.get("id"), str)},
                  outside if outside is not None else {})
    found = []
    for kind, records, keys in (("node", nodes, NODE_REFERENCES), ("call", calls, CALL_REFERENCES)):
        for record in records:
            for key in keys:
                value = record.get(key)
                # An item that is not an id at all is named by the property's own rule.
                ids = [item for item in (value if isinstance(value, (list, tuple)) else [value])
                       if isinstance(item, str)]
                missing = [item for item in ids if item not in named]
                if missing:
                    found.append(f"{label(kind, record)}: {key} {_ids(missing)} "
                                 f"{'is not a node' if len(missing) == 1 else 'are not nodes'} "
                                 "of this session")
                elif key in SUMMARY_REFERENCES and any(
                        named.role(i) != Role.SUMMARY.value for i in ids):
                    other = next(i for i in ids if named.role(i) != Role.SUMMARY.value)
                    found.append(f"{label(kind, record)}: {key} {validate.shown(other)} "
                                 "is not a summary of this session")
    call_ids = {c["id"] for c in calls if isinstance(c.get("id"), str)}
    for call in calls:
        previous = call.get("previous_call_id")
        if isinstance(previous, str) and (previous not in call_ids or previous == call.get("id")):
            found.append(f"{label('call', call)}: previous_call_id {validate.shown(previous)} "
                         "is not another call of this session")
    return found


def _ids(ids: Sequence[str]) -> str:
    """One id as its repr, several as the first few of them and how many more there are."""
    if len(ids) == 1:
        return validate.shown(ids[0])
    return validate.some([validate.shown(item) for item in ids])


def problems(session: Record, nodes: Sequence[Record], calls: Sequence[Record],
             limits: Limits, outside: Mapping[str, str] | None = None) -> list[str]:
    """Every value of the session's records the API could not have written; [] when none.
    `outside`: the session's nodes (id -> role) that `nodes`, a part of them, may name."""
    found = record_problems("session", session, SESSION, limits)
    for node in nodes:
        found += node_problems(node, limits)
    for call in calls:
        found += record_problems("call", call, CALL, limits)
    return found + reference_problems(nodes, calls, outside)


# --- what a node's blocks imply beyond its properties ------------------------------------

def implied_edges(node: Record, limits: Limits) -> dict[str, list[Any]] | None:
    """What the writes derive from a node's blocks (blocks.implied); None when its blocks
    break a rule."""
    stored = _sound_blocks(node, limits)
    return None if stored is None else blocks.implied(stored)


def edge_problems(node: Record, stored: Mapping[str, Any], limits: Limits) -> list[str]:
    """The stored edges of a node (`uses` [{id, name}], `answers` [{id, is_error}],
    `carries` [sha256]) that disagree with its blocks. Which tool uses the edges reach is
    an invariant of the graph (cypher/fragments/check_session_invariants.cypher); this
    names what only the blocks say: tool names, error flags and media."""
    implied = implied_edges(node, limits)
    if implied is None:
        return []
    where = label("node", node)
    names = {use["id"]: use["name"] for use in implied["tool_uses"]}
    errors = dict(zip(implied["answers"], implied["answer_errors"]))
    found = [f"USES: {where}: tool use {use['id']} is named {validate.shown(use['name'])}, "
             f"not {names[use['id']]!r} as in its blocks"
             for use in stored["uses"] if use["id"] in names and use["name"] != names[use["id"]]]
    found += [f"ANSWERS: {where}: its ANSWERS edge to {answer['id']} has is_error "
              f"{validate.shown(answer['is_error'])}, not its tool_result's {errors[answer['id']]}"
              for answer in stored["answers"]
              if answer["id"] in errors and answer["is_error"] is not errors[answer["id"]]]
    if sorted(map(str, stored["carries"])) != sorted(implied["media_refs"]):
        found.append(f"CARRIES: {where} carries media ({_listed(stored['carries'])}) where its "
                     f"blocks name ({_listed(implied['media_refs'])})")
    return found


def _listed(items: Sequence[Any]) -> str:
    return ", ".join(str(item) for item in sorted(map(str, items)))


# --- media ------------------------------------------------------------------------------

MEDIUM_FIELDS = ("sha256", "media_type", "data", "bytes")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def medium_problems(medium: Record, limits: Limits) -> list[str]:
    """What is wrong with a stored medium (or a backup's), each problem naming it; [] when
    it holds exactly what the API stores: data of an image or document type, in standard
    padded base64, within the limit, under the sha256 of the data and its size in bytes."""
    digest = medium.get("sha256")
    where = f"media {digest}" if isinstance(digest, str) and _SHA256.match(digest) else \
        f"media {validate.shown(digest)}"
    found = [f"{where}: {key} is not a property the ledger writes on a medium"
             for key in sorted(set(medium) - set(MEDIUM_FIELDS))]
    found += [f"{where}: {key} is missing" for key in MEDIUM_FIELDS if key not in medium]
    if found:
        return found
    types = blocks.IMAGE_TYPES + blocks.DOCUMENT_TYPES
    if not isinstance(digest, str) or not _SHA256.match(digest):
        found.append(f"{where}: sha256 must be 64 lowercase hex digits")
    if medium["media_type"] not in types:
        found.append(f"{where}: media_type must be one of: {', '.join(types)}; "
                     f"not {validate.shown(medium['media_type'])}")
    try:
        data = _media_data(medium["data"], limits)
    except BadInput as e:
        return found + [f"{where}: {e.message}"]
    if hashlib.sha256(data).hexdigest() != digest:
        return found + [f"{where}: data does not hash to its sha256"]
    if type(medium["bytes"]) is not int or medium["bytes"] != len(data):
        found.append(f"{where}: bytes is {validate.shown(medium['bytes'])}, not the "
                     f"{len(data)} bytes of its data")
    return found


def _media_data(value: Any, limits: Limits) -> bytes:
    if not isinstance(value, str):
        raise BadInput("data must be base64 text")
    if len(value) > (limits.max_media_bytes + 2) // 3 * 4 + 4:  # never decode what is far over
        raise BadInput(f"data is over the limit of {limits.max_media_bytes} bytes")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        data = None
    if data is None or base64.b64encode(data).decode("ascii") != value:
        raise BadInput("data is not base64 as the ledger stores it (the standard alphabet, "
                       "padded, on one line)")
    if not data:
        raise BadInput("data is empty")
    if len(data) > limits.max_media_bytes:
        raise BadInput(f"data is {len(data)} bytes; the limit is {limits.max_media_bytes}")
    return data
