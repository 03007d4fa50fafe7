"""Agent transcripts (JSONL files other tools write) read into ctxdag sessions.

`read(text, file, format)` parses a file of one of FORMATS (detected from its first line
when `format` is None) into a backup document (document.py), which the store imports or,
when the session is stored already, extends (service/store/transcripts.py). What a read
cannot map it skips or mentions and lists in its Mode's `degraded`; a strict Mode refuses
the file instead.
"""
from __future__ import annotations

import asyncio
import json
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from ..store.ledger import Ledger
from ..store.transcripts import (CONTENT, Stored, fingerprint, session_held, stored_import,
                                 stored_unchanged)
from ..model.validate import Limits
from . import claude_code, codex, codex_names, origin, pi, subagents
from .jsonl import objects
from .model import (Degraded, DegradedKind, Mode, Transcript, bad_line, no_turns,
                    not_a_transcript, session_id)
from .reading import Reading

if TYPE_CHECKING:
    from .streamed import Streamed


class Format(str, Enum):
    """The transcript formats read, by the names `--format` takes."""

    CLAUDE_CODE = claude_code.TOOL
    PI = pi.TOOL
    CODEX = codex.TOOL


PARSERS: dict[str, Callable[[str, str, Mode], Transcript]] = {
    Format.CLAUDE_CODE.value: claude_code.parse,
    Format.PI.value: pi.parse,
    Format.CODEX.value: codex.parse,
}
FORMATS = tuple(PARSERS)


def detect(text: str, file: str, strict: bool = False) -> str:
    """The format of a file, from its first line (its first JSON object unless `strict`)."""
    mode = Mode(strict)
    for _, first in objects(text, file, mode):
        if pi.looks_like(first):
            return pi.TOOL
        if codex.looks_like(first):
            return codex.TOOL
        if claude_code.looks_like(first):
            return claude_code.TOOL
        raise not_a_transcript(file, f"not a transcript of a known format ({', '.join(FORMATS)}); "
                               "name it with --format")
    if mode.degraded:  # lines, none of them an entry (a file of something else)
        bad = mode.degraded[0]
        raise not_a_transcript(file, f"no line of it is a JSON object with a string \"type\" "
                                     f"(line {bad.line}: {bad.reason})")
    raise not_a_transcript(file, "the file is empty")


def read(text: str, file: str, format: str | None, tenant: str, limits: Limits,
         read_text: Callable[[str], str] | None = None,
         settle: Callable[[Transcript], Transcript] | None = None,
         mode: Mode | None = None) -> dict[str, Any]:
    """The backup document of one transcript file for `tenant`; BadInput naming file and
    line when it cannot be read. With `read_text`, the files a Claude Code session keeps
    beside it (its sub-agents) are read with it; `settle` cuts what may still grow
    (follow.py); `mode` collects what the read degraded (default: not strict)."""
    mode = mode if mode is not None else Mode()
    return document_of(reading_of(text, file, format, tenant, limits, mode.strict), text,
                       read_text, mode, settle)


def document_of(reading: Reading, text: str, read_text: Callable[[str], str] | None,
                mode: Mode, settle: Callable[[Transcript], Transcript] | None = None
                ) -> dict[str, Any]:
    """`read`'s document, of a Reading fed `text` (whole, or a part at a time)."""
    side = beside(reading.file, reading.tool, read_text)
    shaped = reading.document(mode, side.agents, settle, side.named)
    mode.degraded.sort(key=lambda d: (d.file != reading.file, d.file, d.line))
    if settle is None and not mode.degraded:
        # The session is all this text (and what is beside it) holds, and only it: the
        # next import of the same text is recognised unparsed (unchanged).
        shaped["session"]["properties"].update(
            source_fingerprint(text, reading.file, reading.tool, side))
    return {**shaped, CONTENT: text}


def reading_of(text: str, file: str, format: str | None, tenant: str, limits: Limits,
               strict: bool = False) -> Reading:
    """A Reading of `text` (reading.py), to be fed what the file gains."""
    tool = format or detect(text, file, strict)
    if tool not in PARSERS:
        raise bad_line(file, 1, f"format {tool!r} is not one of: {', '.join(FORMATS)}")
    reading = Reading(file, tool, tenant, limits, strict)
    reading.feed(text)
    return reading


class Beside(NamedTuple):
    """What the read of a session file takes from beside it: the sub-agent files of a
    Claude Code session (subagents.py), the name Codex's index gives a rollout's thread
    (codex_names.py)."""

    agents: list[subagents.SubAgent]
    named: str | None = None


def beside(file: str, tool: str, read_text: Callable[[str], str] | None) -> Beside:
    """What is read with session file `file` (nothing without `read_text`: a text given)."""
    if read_text is None:
        return Beside([])
    if tool == claude_code.TOOL:
        return Beside(subagents.beside(file, read_text))
    if tool == codex.TOOL:
        return Beside([], codex_names.name_of(file, read_text))
    return Beside([])


def source_fingerprint(text: str, file: str, tool: str, side: Beside) -> dict[str, Any]:
    """The fingerprint (store.transcripts.fingerprint) of a session file's text and what is
    read with it: another side file, one grown, or another name, is other text."""
    return fingerprint(text, file, tool, side_text(side))


def side_text(side: Beside) -> str:
    """What a session file's fingerprint hashes of what is read with it, after its own
    text (nothing when nothing is: a file's fingerprint without a name stays as it was)."""
    named = "" if side.named is None else f"\0{codex_names.INDEX}\0{side.named}"
    return named + "".join(
        f"\0{agent.file}\0{json.dumps(agent.sidecar, sort_keys=True)}\0{agent.text}"
        for agent in side.agents)


async def unchanged(ledger: Ledger, text: str, file: str, format: str | None,
                    read_text: Callable[[str], str] | None = None,
                    strict: bool = False) -> Stored | None:
    """The session last imported from exactly this text (and, with `read_text`, the same
    sub-agent files or thread name beside it), found by its fingerprint without parsing
    the text; None when there is none (the text is new, grown, or its import degraded
    entries)."""
    tool = format or detect(text, file, strict)
    return await stored_unchanged(ledger.db, ledger.tenant,
                                  source_fingerprint(text, file, tool,
                                                     beside(file, tool, read_text)))


async def session_stored(ledger: Ledger, session_id: str) -> bool:
    """Whether the ledger's tenant holds session `session_id` already."""
    return await session_held(ledger.db, ledger.tenant,
                              {"session": {"properties": {"id": session_id}}})


async def new_in_parts(ledger: Ledger, tool: str, read_as: dict[str, Any],
                       key_of: Callable[[], str | None] | None, plan: Callable[[], Streamed],
                       mode: Mode, grow: Callable[[int], Streamed] | None = None
                       ) -> Stored | Streamed | None:
    """A large text made ready to be stored in parts (streamed.py): the session it was
    imported into unchanged, found by its fingerprint `read_as`; else its `plan` (`mode`
    collecting what it degrades) when its session is new; else, when the session is
    stored (the one `key_of` guesses from its first lines), the Streamed `grow` plans of
    it, its `grows` set (store/transcript_growth.py stores it), given the bytes the session
    was last imported from to hash as they pass; else None: it is then read whole, as a
    growth, and what planning degraded is let go (no `grow`, a session imported before
    its bytes were noted, or one the plan names but its first lines did not tell).
    `key_of`, `plan` and `grow` run in a worker thread."""
    held = await stored_unchanged(ledger.db, ledger.tenant, read_as)
    if held is not None:
        return held
    key = None if key_of is None else await asyncio.to_thread(key_of)
    planned = None
    if key is not None:
        guessed = session_id(ledger.tenant, tool, key)
        stored, imported = await stored_import(ledger.db, ledger.tenant, guessed)
        if stored:
            if grow is None or imported is None:
                return None
            planned = await asyncio.to_thread(grow, imported["bytes"])
            if planned.session_id == guessed:
                planned.grows = True
                return planned
    if planned is None:
        planned = await asyncio.to_thread(plan)
    if await session_stored(ledger, planned.session_id):
        mode.degraded.clear()
        return None
    return planned
