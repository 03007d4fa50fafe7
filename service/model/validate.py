"""Input checks that need no database. Each failure is a BadInput a person can act on.

These are the rules for every value the ledger stores: the API's writes apply them,
and so do an import (service/store/backup.py) and `ctxdag check` (through
service/store/records.py), so no stored value is one the API could not have written.
"""
from __future__ import annotations

import json
import reprlib
import unicodedata
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from enum import Enum
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from ..errors import BadInput
from .kinds import Purpose, Role, SummaryStrategy, native

E = TypeVar("E", bound=Enum)

MAX_ID_LENGTH = 128
MAX_TITLE_LENGTH = 200
MAX_NAME_LENGTH = 200  # a model, provider or error code
MAX_PATH_LENGTH = 4096  # a session's project (working directory) or source file
MAX_INSTRUCTIONS_LENGTH = 4000  # a compaction's focus instructions, in characters
MAX_LABEL_LENGTH = 100  # a node's label, in characters
MAX_BRANCH_NAME_LENGTH = 100  # a branch's name, in characters
MAX_REDACTION_REASON_LENGTH = 500  # why a node was redacted, in characters
MAX_INTEGER = 2**63 - 1  # Neo4j stores 64-bit integers
MAX_JSON_DEPTH = 32  # objects and arrays within one another in metadata / extra_meta
APPENDABLE_ROLES = (Role.USER, Role.ASSISTANT, Role.TOOL)
RESERVED_META_PREFIX = "_"
NAMED_AT_MOST = 10
MAX_UTC_OFFSET = timedelta(hours=18)  # Neo4j's range of offsets

_shown = reprlib.Repr()
_shown.maxstring = _shown.maxother = 60


@dataclass(frozen=True)
class Limits:
    max_content_bytes: int = 1024 * 1024
    max_metadata_bytes: int = 64 * 1024
    max_call_reads: int = 10_000  # node ids a recorded external call may name
    event_retention: int = 10_000  # a session's newest events kept for replay
    max_media_bytes: int = 5 * 1024 * 1024  # one image or document of a message, decoded


def shown(value: object) -> str:
    """`value` as a short repr, fit for a one-line message."""
    return _shown.repr(value)


def some(items: Iterable[object], at_most: int = NAMED_AT_MOST) -> str:
    """The first `at_most` items, then how many more there are."""
    items = list(items)
    named = ", ".join(str(item) if isinstance(item, str) and len(item) <= MAX_ID_LENGTH
                      else shown(item) for item in items[:at_most])
    rest = len(items) - at_most
    return named + (f" and {rest} more" if rest > 0 else "")


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`number` and its noun, singular for one: "1 file", "3 files", "2 entries"."""
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


def utf8_size(text: str, what: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise BadInput(f"{what} is not valid Unicode text (position {e.start})") from e


def content(text: object, limits: Limits, what: str = "content", allow_empty: bool = False) -> str:
    if not isinstance(text, str):
        raise BadInput(f"{what} must be a string")
    size = utf8_size(text, what)
    if not allow_empty and not text.strip():
        raise BadInput(f"{what} is empty")
    if size > limits.max_content_bytes:
        raise BadInput(
            f"{what} is {size} bytes; the limit is {limits.max_content_bytes} bytes of UTF-8",
            size=size, limit=limits.max_content_bytes,
        )
    return text


def appendable_role(value: object) -> Role:
    try:
        role = Role(value.value if isinstance(value, Role) else value)
    except (ValueError, TypeError):
        allowed = ", ".join(r.value for r in APPENDABLE_ROLES)
        raise BadInput(f"role {shown(value)} is not one of: {allowed}") from None
    if role not in APPENDABLE_ROLES:
        allowed = ", ".join(r.value for r in APPENDABLE_ROLES)
        raise BadInput(f"role {role.value!r} cannot be appended (allowed: {allowed}); "
                       "ROOT holds the system prompt, summaries are written by compaction and "
                       "carry nodes by carryOver")
    return role


def identifier(value: object, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_ID_LENGTH:
        raise BadInput(f"{what} must be a non-empty string of at most {MAX_ID_LENGTH} characters")
    utf8_size(value, what)
    return value


def moment(text: str, what: str) -> datetime:
    """A date or time a person typed (ISO 8601), in local time unless it names a zone."""
    try:
        return datetime.fromisoformat(text).astimezone()
    except (ValueError, OverflowError, OSError):
        raise BadInput(f"{what} must be an ISO 8601 date or time (2026-01-31, "
                       f"2026-01-31T08:00), not {text!r}") from None


def timestamp(value: Any, what: str) -> Any:
    """A point in time the driver can send and Neo4j compare (a Python or a driver
    datetime): with a zone or an offset, the offset whole minutes within ±18:00, and its
    UTC instant, which is what the driver sends, within years 1 to 9999."""
    offset = value.utcoffset()
    if offset is None:
        raise BadInput(f"{what} must be a datetime with an offset or zone")
    if abs(offset) > MAX_UTC_OFFSET or offset % timedelta(minutes=1):
        raise BadInput(f"{what} has an offset Neo4j cannot hold (whole minutes within ±18:00)")
    try:
        native(value).astimezone(timezone.utc)
    except OverflowError:
        raise BadInput(f"{what} lies outside years 1 to 9999 in UTC") from None
    return value


def optional_identifier(value: object, what: str) -> str | None:
    return None if value is None else identifier(value, what)


def title(value: object, what: str = "title") -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadInput(f"{what} must be a string")
    utf8_size(value, what)
    if len(value) > MAX_TITLE_LENGTH:
        raise BadInput(f"{what} is {len(value)} characters; the limit is {MAX_TITLE_LENGTH}")
    return value


def instructions(value: object, what: str = "instructions") -> str | None:
    """A compaction's focus instructions: None, or non-blank text of at most
    MAX_INSTRUCTIONS_LENGTH characters (well under any content byte limit)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadInput(f"{what} must be a string")
    utf8_size(value, what)
    if not value.strip():
        raise BadInput(f"{what} are blank; leave them out to compact without focus instructions")
    if len(value) > MAX_INSTRUCTIONS_LENGTH:
        raise BadInput(f"{what} are {len(value)} characters; the limit is "
                       f"{MAX_INSTRUCTIONS_LENGTH}", size=len(value),
                       limit=MAX_INSTRUCTIONS_LENGTH)
    return value


def summary_strategy(value: object, what: str = "summary strategy") -> str:
    """Which summaries a session's renders consider (docs/concepts/strategies.md): a
    session's summary_strategy, or the strategy a summary was written under."""
    allowed = [strategy.value for strategy in SummaryStrategy]
    if not isinstance(value, str) or value not in allowed:
        raise BadInput(f"{what} must be one of {', '.join(map(repr, allowed))}, "
                       f"not {shown(value)}")
    return value


# Control characters (C0, DEL, C1) and the line and paragraph separators: a name holding
# one can break the line it is shown on, or drive the terminal that shows it.
_UNPRINTABLE = frozenset({"Cc", "Zl", "Zp"})


def one_line(value: str, what: str) -> str:
    """`value`, refused when it holds a line break or another control character."""
    found = next((ch for ch in value if unicodedata.category(ch) in _UNPRINTABLE), None)
    if found is not None:
        raise BadInput(f"{what} must be one line without control characters; it holds "
                       f"U+{ord(found):04X}")
    return value


def label(value: object, what: str = "label") -> str:
    """A node's label: one line of non-blank text, at most MAX_LABEL_LENGTH characters."""
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{what} must be non-blank text")
    utf8_size(value, what)
    if len(value) > MAX_LABEL_LENGTH:
        raise BadInput(f"{what} is {len(value)} characters; the limit is {MAX_LABEL_LENGTH}")
    return one_line(value, what)


def redaction_reason(value: object, what: str = "reason") -> str:
    """Why a node was redacted: non-blank text, at most MAX_REDACTION_REASON_LENGTH
    characters (it is kept for the audit, so it must not quote what it erases)."""
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{what} must be non-blank text: a redaction says why it was made")
    utf8_size(value, what)
    if len(value) > MAX_REDACTION_REASON_LENGTH:
        raise BadInput(f"{what} is {len(value)} characters; the limit is "
                       f"{MAX_REDACTION_REASON_LENGTH}")
    return value


def branch_name(value: object, what: str = "branch name") -> str:
    """A branch's name: one line of non-blank text without surrounding blanks, at most
    MAX_BRANCH_NAME_LENGTH characters."""
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{what} must be non-blank text")
    utf8_size(value, what)
    if len(value) > MAX_BRANCH_NAME_LENGTH:
        raise BadInput(f"{what} is {len(value)} characters; the limit is "
                       f"{MAX_BRANCH_NAME_LENGTH}")
    one_line(value, what)
    if value != value.strip():
        raise BadInput(f"{what} must not begin or end with blanks")
    return value


def name(value: object, what: str) -> str:
    """A model, provider or error code: a short, non-blank string."""
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{what} must be a non-empty string")
    utf8_size(value, what)
    if len(value) > MAX_NAME_LENGTH:
        raise BadInput(f"{what} is {len(value)} characters; the limit is {MAX_NAME_LENGTH}")
    return value


def optional_name(value: object, what: str) -> str | None:
    return None if value is None else name(value, what)


def path(value: object, what: str) -> str:
    """A working directory or a file's name: a non-blank string of at most MAX_PATH_LENGTH
    characters."""
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{what} must be a non-empty string")
    utf8_size(value, what)
    if len(value) > MAX_PATH_LENGTH:
        raise BadInput(f"{what} is {len(value)} characters; the limit is {MAX_PATH_LENGTH}")
    return value


def names(value: object, what: str) -> list[str]:
    """A list of models (or other names), each once."""
    if not isinstance(value, (list, tuple)):
        raise BadInput(f"{what} must be a list of names")
    for i, item in enumerate(value):
        name(item, f"{what}[{i}]")
    if len(set(value)) != len(value):
        raise BadInput(f"{what} names one twice")
    return list(value)


def file_name(value: object, what: str = "file name") -> str:
    """The name of a file an error message shows as `FILE:LINE`: a name on one line."""
    return one_line(name(value, what), what)


def flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise BadInput(f"{what} must be true or false")
    return value


def count(value: object, what: str, minimum: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= MAX_INTEGER:
        raise BadInput(f"{what} must be an integer from {minimum} to {MAX_INTEGER}")
    return value


def optional_count(value: object, what: str) -> int | None:
    return None if value is None else count(value, what)


def json_object(value: Mapping[str, Any] | None, limits: Limits, what: str) -> str:
    """Serializes a JSON object for storage; refuses anything else or anything too large."""
    if value is None:
        return "{}"
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise BadInput(f"{what} must be a JSON object with string keys")
    try:
        text = _OBJECT_TEXT.encode(dict(value))
    except (TypeError, ValueError, RecursionError) as e:
        _within_depth(value, what)
        raise BadInput(f"{what} is not JSON-serializable: {e}") from e
    if text.count("{") + text.count("[") > MAX_JSON_DEPTH:
        # Deep enough to be too deep, maybe (a string may hold brackets too): walked.
        _within_depth(value, what)
    size = utf8_size(text, what)
    if size > limits.max_metadata_bytes:
        raise BadInput(f"{what} is {size} bytes of JSON; the limit is {limits.max_metadata_bytes}")
    return text


def _within_depth(value: Mapping[str, Any], what: str) -> None:
    if _nesting(value) > MAX_JSON_DEPTH:
        raise BadInput(f"{what} nests objects and arrays more than {MAX_JSON_DEPTH} deep")


# json.dumps(…, ensure_ascii=False, allow_nan=False, sort_keys=True), made once: every
# metadata a transcript's import writes is serialized here.
_OBJECT_TEXT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True)


JSON_SCHEMA_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")


def json_schema(value: Mapping[str, Any], what: str) -> Mapping[str, Any]:
    """A JSON Schema, checked against its meta-schema (the draft its `$schema` names;
    2020-12, which the Messages API reads, when it names none)."""
    from jsonschema import Draft202012Validator, SchemaError
    from jsonschema.validators import validator_for

    try:
        validator_for(value, default=Draft202012Validator).check_schema(value)
    except SchemaError as e:
        where = e.json_path[1:]  # "$.properties.word" -> ".properties.word"
        hint = (f" (a type is one of: {', '.join(JSON_SCHEMA_TYPES)})"
                if e.path and e.path[-1] == "type" else "")
        raise BadInput(f"{what}{where} is not valid JSON Schema: {e.message}{hint}",
                       schema_path=where or None) from None
    return value


def _nesting(value: object) -> int:
    """How deep objects and arrays lie within one another (a level at a time, without
    recursing)."""
    deepest, level, items = 0, 1, [value]
    while items and deepest <= MAX_JSON_DEPTH:
        inner: list[object] = []
        for item in items:
            if isinstance(item, Mapping):
                inner.extend(item.values())
            elif isinstance(item, (list, tuple)):
                inner.extend(item)
            else:
                continue
            deepest = level
        items, level = inner, level + 1
    return deepest


def parse_json(text: str, what: str) -> Any:
    """Strict JSON: no NaN or Infinity, no key twice in one object."""
    try:
        return json.loads(text, parse_constant=_no_constant, parse_int=_integer,
                          object_pairs_hook=_unique_keys)
    except RecursionError:
        raise BadInput(f"{what} nests too deeply to be read") from None
    except ValueError as e:
        raise BadInput(f"{what} is not valid JSON: {e}") from None


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"an integer of {len(text)} digits is too long to read") from None


def _no_constant(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("an object names a key twice")
    return found


def stored_json_object(text: object, limits: Limits, what: str) -> dict[str, Any]:
    """A stored JSON object (metadata, extra_meta): text the API's json_object could write."""
    if not isinstance(text, str):
        raise BadInput(f"{what} must be a JSON object stored as a string")
    size = utf8_size(text, what)
    if size > limits.max_metadata_bytes:
        raise BadInput(f"{what} is {size} bytes of JSON; the limit is {limits.max_metadata_bytes}")
    value = parse_json(text, what)
    json_object(value, limits, what)
    return value


def user_meta_keys(patch: object) -> Mapping[str, Any]:
    if not isinstance(patch, Mapping):
        raise BadInput("extra_meta must be a JSON object with string keys")
    reserved = sorted(k for k in patch if isinstance(k, str) and k.startswith(RESERVED_META_PREFIX))
    if reserved:
        raise BadInput(f"extra_meta keys starting with '{RESERVED_META_PREFIX}' are reserved "
                       f"for ctxdag itself: {some(reserved)}")
    return patch


def extra_meta(value: object, limits: Limits, what: str = "extra_meta") -> str:
    """The client's extra_meta (or a patch of it) as stored; None is the empty object."""
    if value is None:
        return "{}"
    return json_object(user_meta_keys(value), limits, what)


def read_ids(ids: object, limits: Limits, purpose: Purpose, what: str = "the read ids",
             each: bool = True) -> tuple[str, ...]:
    """The nodes a call's prompt contained, in prompt order: each once (and, when `each`,
    each a well-formed id).

    Calls an external runtime records name at most `limits.max_call_reads`; a call the
    service makes reads a render, whose length the token budget bounds.
    """
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
        raise BadInput(f"{what} must be a list of node ids")
    if not ids:
        raise BadInput(f"{what} must name at least one node the prompt contained")
    read_count(len(ids), limits, purpose, f"the number of {what}")
    if each:
        for read_id in ids:
            identifier(read_id, f"each of {what}")
    repeated = [node_id for node_id, seen in Counter(ids).items() if seen > 1]
    if repeated:
        raise BadInput(f"{what} name {len(repeated)} nodes more than once: {some(repeated)}")
    return tuple(ids)


def read_count(value: object, limits: Limits, purpose: Purpose, what: str) -> int:
    number = count(value, what, minimum=1)
    if purpose is Purpose.EXTERNAL and number > limits.max_call_reads:
        raise BadInput(f"{what} is {number}; a recorded call may read at most "
                       f"{limits.max_call_reads} nodes", size=number, limit=limits.max_call_reads)
    return number


def error_message(value: object, limits: Limits, what: str = "error message") -> str | None:
    return None if value is None else content(value, limits, what, allow_empty=True)


def enum_value(kind: type[E], value: object, what: str) -> E:
    try:
        return kind(value)
    except ValueError:
        allowed = ", ".join(str(member.value) for member in kind)
        raise BadInput(f"{what} {shown(value)} is not one of: {allowed}") from None


def page_size(first: object, maximum: int = 100, name: str = "first") -> int:
    if not isinstance(first, int) or isinstance(first, bool) or not 1 <= first <= maximum:
        raise BadInput(f"{name} must be an integer from 1 to {maximum}")
    return first
