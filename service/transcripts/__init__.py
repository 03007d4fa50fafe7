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
from typing import TYPE_CHECKING, Any, Callable

from ..store.ledger import Ledger
from ..store.transcripts import (CONTENT, Stored, fingerprint, session_held, stored_import,
                                 stored_unchanged)
from ..model.validate import Limits
from . import claude_code, codex, origin, pi, subagents
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
    for _, first in objects(text, file, Mode(strict)):
        if pi.looks_like(first):
            return pi.TOOL
        if codex.looks_like(first):
            return codex.TOOL
        if claude_code.looks_like(first):
            return claude_code.TOOL
        raise not_a_transcript(file, f"not a transcript of a known format ({', '.join(FORMATS)}); "
                               "name it with --format")
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
    agents = side_files(reading, read_text)
    shaped = reading.document(mode, agents, settle)
    mode.degraded.sort(key=lambda d: (d.file != reading.file, d.file, d.line))
    if settle is None and not mode.degraded:
        # The session is all this text (and its side files) holds, and only it: the next
        # import of the same text is recognised unparsed (unchanged).
        shaped["session"]["properties"].update(
            source_fingerprint(text, reading.file, reading.tool, agents))
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


def side_files(reading: Reading,
               read_text: Callable[[str], str] | None) -> list[subagents.SubAgent]:
    """The sub-agent files read with a Claude Code session (none without `read_text`)."""
    if reading.tool != claude_code.TOOL or read_text is None:
        return []
    return subagents.beside(reading.file, read_text)


def source_fingerprint(text: str, file: str, tool: str,
                       agents: list[subagents.SubAgent]) -> dict[str, Any]:
    """The fingerprint (store.transcripts.fingerprint) of a session file's text and the
    sub-agent files read with it: another side file, or one grown, is other text."""
    return fingerprint(text, file, tool, side_text(agents))


def side_text(agents: list[subagents.SubAgent]) -> str:
    """What a session file's fingerprint hashes of the sub-agent files read with it, after
    its own text."""
    return "".join(f"\0{agent.file}\0{json.dumps(agent.sidecar, sort_keys=True)}\0{agent.text}"
                   for agent in agents)


async def unchanged(ledger: Ledger, text: str, file: str, format: str | None,
                    read_text: Callable[[str], str] | None = None,
                    strict: bool = False) -> Stored | None:
    """The session last imported from exactly this text (and, with `read_text`, the same
    sub-agent files beside it), found by its fingerprint without parsing the text; None
    when there is none (the text is new, grown, or its import degraded entries)."""
    tool = format or detect(text, file, strict)
    agents = subagents.beside(file, read_text) \
        if tool == claude_code.TOOL and read_text is not None else []
    return await stored_unchanged(ledger.db, ledger.tenant,
                                  source_fingerprint(text, file, tool, agents))


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
