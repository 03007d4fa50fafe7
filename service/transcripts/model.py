"""The provider-neutral shape of an imported transcript, and the ids derived from its source.

A format's parser (claude_code.py, pi.py, …) reads a file into a `Transcript`: the turns
of its conversation tree, each keyed by the source entry it came from, and the
compactions the tool made. document.py maps that onto ctxdag's session backup document.
Nothing here knows a format; nothing in a parser knows the ledger.

Ids are derived from the source, never drawn at random: a session's from (tenant, tool,
the source's session key), a node's from those and the key of its source entry (ids are
unique across tenants, so each tenant importing one file gets ids of its own).
Importing the same file twice therefore names the same nodes, and a grown file names the
nodes already stored by the ids they were stored under.
"""
from __future__ import annotations

import hashlib
import re
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum
from pathlib import PurePath
from typing import Any

from ..errors import BadInput, CtxdagError

ROOT_KEY = "root"  # the ROOT node's key: no tool records a system prompt entry
# What a turn's content set aside on disk is (spill.py), which its Turn and Building then
# read back.
SET_ASIDE = frozenset({"blocks", "meta"})
_TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")  # blocks.py's (the providers') pattern
_TOOL_NAME_OTHER = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True, slots=True)
class Turn:
    """One message node: a user, assistant or tool message."""

    key: str  # the source entry it is named by (of several merged: the last)
    parent: str  # the key of its predecessor turn, ROOT_KEY at the start
    role: str  # user | assistant | tool
    blocks: tuple[dict[str, Any], ...]  # Anthropic-shaped (service/model/blocks.py)
    at: datetime
    line: int  # the file line of its first entry
    entries: tuple[str, ...]  # every source entry id it holds
    meta: dict[str, Any] = field(default_factory=dict)  # what else the source said
    # A turn of a sub-agent the transcript spawned (claude_code.py): on a side branch,
    # pointing CALLER at the turn whose tool use it ran for, read from a file of its own.
    caller: str | None = None
    side_branch: bool = False
    file: str | None = None  # None: the transcript's own file
    # A reply the tool keeps out of what its model reads (Pi: an aborted or errored one;
    # Claude Code: the API error it wrote in its model's place).
    out_of_context: bool = False
    # Where its blocks and meta were set aside (spill.py): it holds neither, and reads them
    # back each time they are read.
    aside: Any = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def set_aside(cls, aside: Any, key: str, parent: str, role: str, at: datetime, line: int,
                  entries: tuple[str, ...], *, caller: str | None, side_branch: bool,
                  out_of_context: bool) -> Turn:
        """A Turn whose blocks and meta `aside.load()` reads back."""
        turn = object.__new__(cls)
        for name, value in (("key", key), ("parent", parent), ("role", role), ("at", at),
                            ("line", line), ("entries", entries), ("caller", caller),
                            ("side_branch", side_branch), ("file", None),
                            ("out_of_context", out_of_context), ("aside", aside)):
            object.__setattr__(turn, name, value)
        return turn

    def __getattr__(self, name: str) -> Any:
        # Only an attribute it does not hold comes here: blocks or meta set aside.
        if name not in SET_ASIDE or self.aside is None:  # (unset during a copy)
            raise AttributeError(name)
        blocks, meta = self.aside.load()
        return tuple(blocks) if name == "blocks" else meta

    def __reduce__(self) -> tuple[Any, ...]:
        return _turn_of, held(self)


def _turn_of(*values: Any) -> Turn:
    return restored(Turn, values)


def held(obj: Any) -> tuple[Any, ...]:
    """The slots of `obj` in order, as it is pickled or copied: its blocks and meta set
    aside stay set aside (None: its `__getattr__` would read them back). One tuple, as a
    pickle holds on to each object it packs until it is done."""
    values = []
    for name in type(obj).__slots__:
        try:
            values.append(object.__getattribute__(obj, name))
        except AttributeError:
            values.append(None)
    return tuple(values)


def restored(cls: type, values: tuple[Any, ...]) -> Any:
    """An object of `cls` holding the slots `held` gave."""
    obj = object.__new__(cls)
    for name, value in zip(cls.__slots__, values):
        if value is not None or name not in SET_ASIDE:
            object.__setattr__(obj, name, value)
    return obj


@dataclass(frozen=True)
class Compaction:
    """A summary the tool made, standing in for the chain ROOT → `last_covered`.

    `compacted_head` is the turn the tool compacted at (the chain below `last_covered`
    down to it is what the tool kept verbatim after its summary); the conversation goes
    on below `compacted_head`. `text` is the summary as recorded (empty when the tool
    recorded none, e.g. an encrypted one: `meta` says so).
    """

    key: str
    last_covered: str
    compacted_head: str
    text: str
    at: datetime
    line: int
    entries: tuple[str, ...]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Label:
    """Where the source's labels leave a node: its label, or none (`text` None) when the
    source cleared the label it gave it."""

    key: str  # the turn (or compaction) labeled
    text: str | None
    at: datetime


@dataclass(frozen=True)
class SystemPrompt:
    """The system prompt a file records (Codex's `session_meta.base_instructions`, what it
    sends as the Responses API's `instructions`): its text and the line holding it."""

    text: str
    line: int


@dataclass(frozen=True)
class NamedTools:
    """The tool definitions a file names for its session (Codex: `session_meta`'s
    `dynamic_tools`), each as {name, description, input_schema} where the source's entry
    has that shape (else the entry as it is, for document.py to degrade): unchecked; the
    line naming them and its time."""

    line: int
    at: datetime
    definitions: tuple[Any, ...]


CANCELLED = "Cancelled: the transcript ends (or goes on) without a result for this tool use."


@dataclass(frozen=True)
class Transcript:
    tool: str  # claude-code | pi | codex
    file: str  # the name it was read from, as given
    session_key: str  # the source's own session identity
    turns: tuple[Turn, ...]  # parents before children
    compactions: tuple[Compaction, ...]  # in the order the tool made them
    head: str  # the key of the turn the tool was at
    title: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    labels: tuple[Label, ...] = ()  # each node the source labeled, once
    tools: NamedTools | None = None  # None: the file names no tools (Claude Code, Pi)
    system: SystemPrompt | None = None  # None: the file records none (Claude Code, Pi)
    # The result stored for a tool use the file holds none of: what the tool itself sends
    # its model in its place, where it says (codex.py, pi.py).
    unanswered: str = CANCELLED


def digest(*parts: str) -> str:
    # surrogatepass: a key JSON spelled with a lone surrogate still names one node (what
    # stores the key says what is wrong with it).
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def session_id(tenant: str, tool: str, session_key: str) -> str:
    return f"ses_{digest(tenant, tool, session_key)}"


def node_id(tenant: str, tool: str, session_key: str, key: str) -> str:
    return f"nod_{digest(tenant, tool, session_key, key)}"


class DegradedKind(str, Enum):
    """What an import did with an entry it could not map (docs/guides/importing-sessions.md)."""

    MALFORMED_LINE = "malformed_line"  # not a JSON object with a type: skipped
    UNKNOWN_ENTRY = "unknown_entry"  # an entry type the format's reader does not know: skipped
    INVALID_BLOCK = "invalid_block"  # a block the ledger refuses: a text mention in its place
    DETACHED = "detached"  # an entry whose parent the file does not hold: after the one before it
    INVALID_TOOL = "invalid_tool"  # a tool definition the ledger refuses: left out of the tool set


@dataclass(frozen=True)
class Degraded:
    """One entry an import kept less of than the file holds, and why."""

    file: str
    line: int
    kind: DegradedKind
    reason: str


@dataclass
class Mode:
    """How a read treats what it cannot map: `strict` refuses the file (BadInput naming the
    line), otherwise each such entry is skipped or mentioned and listed in `degraded`."""

    strict: bool = False
    degraded: list[Degraded] = field(default_factory=list)

    def degrade(self, file: str, line: int, kind: DegradedKind, reason: str) -> None:
        if self.strict:
            raise bad_line(file, line, reason)
        self.degraded.append(Degraded(file, line, kind, reason))


def bad_line(file: str, line: int, reason: str) -> BadInput:
    """The error for a line a parser cannot take: the file (when it has a name) and line,
    then why."""
    return BadInput(f"{file}:{line}: {reason}" if file else f"line {line}: {reason}",
                    file=file, line=line)


class NoTurns(BadInput):
    """A file holding no conversation turns (yet: a tool writes its header first)."""


class NotATranscript(BadInput):
    """A file of no format read (or empty): in a folder, a file of something else."""


class ImportFailed(CtxdagError):
    """A file the importer itself failed on (a fault of its own, not the file's), reported
    as that file's error so that a walk or a follower goes on with the others."""


def import_failed(file: str, error: Exception) -> ImportFailed:
    frames = traceback.extract_tb(error.__traceback__)
    where = f", at {PurePath(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    said = str(error)[:200].encode("utf-8", "backslashreplace").decode("utf-8")
    return ImportFailed(f"{file}: the importer failed on this file ({type(error).__name__}: "
                        f"{said}{where}); nothing of it is left half-written. This is a fault of "
                        "ctxdag's: please report it with the file's shape", file=file)


def not_a_transcript(file: str, reason: str) -> NotATranscript:
    return NotATranscript(f"{file}:1: {reason}" if file else f"line 1: {reason}",
                          file=file, line=1)


def no_turns(file: str) -> NoTurns:
    return NoTurns(f"{file}:1: the file holds no conversation turns" if file
                   else "line 1: the file holds no conversation turns", file=file, line=1)


def timestamp(value: Any, fallback: datetime | None, file: str, line: int) -> datetime:
    """An ISO-8601 timestamp (a trailing Z included) or Unix milliseconds, in UTC; the
    `fallback` when the entry has none."""
    if value is None and fallback is not None:
        return fallback
    try:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return datetime.fromtimestamp(value / 1000, timezone.utc)
        if isinstance(value, str):
            parsed = datetime.fromisoformat(value)
            if parsed.tzinfo is not None:
                return parsed.astimezone(timezone.utc)
    except (ValueError, OverflowError, OSError):
        pass
    raise bad_line(file, line, f"timestamp {value!r} is not an ISO-8601 time with an offset")


def tool_use_id(raw: str) -> str:
    """A source's tool call id as a ledger tool use id: itself when the providers' pattern
    allows it, else one derived from it (the source's id is kept in the node's metadata)."""
    return raw if _TOOL_USE_ID.match(raw) else f"toolu_{digest(raw)}"


def tool_name(raw: str) -> str:
    """A tool's name as the providers allow it (letters, digits, '_' and '-', at most 64)."""
    return (_TOOL_NAME_OTHER.sub("_", raw) or "tool")[:64]


def cancelled_result(use_id: str, text: str = CANCELLED) -> dict[str, Any]:
    """The stored result of a tool use the source left unanswered (a crash, an interrupt)."""
    return {"type": "tool_result", "tool_use_id": use_id,
            "content": [{"type": "text", "text": text}], "is_error": True}
