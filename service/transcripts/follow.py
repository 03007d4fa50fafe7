"""Following a transcript file while its tool appends to it (`ctxdag import-transcript
--follow FILE`).

The file is polled for its size; only complete lines are read (a line still being
written waits), and each time they grow the transcript is imported again, which stores
only what it gained (service/store/transcripts.py). A turn still growing is held back, so
no node is stored half-built: an assistant message at the end may gain blocks, and a
tool message may gain the results of the other parallel calls (and until they are all
in, the message that called them waits too, rather than being given cancelled results;
so do the lines a Codex rollout recorded between those calls and their outputs); a Claude
Code response may go on after the results of the tools it ran while streaming, so its tool
message at the end waits for the file to be quiet.
A reply without tool uses is let through once the file has been quiet for `settle`
seconds: the tool is then waiting for its user.
"""
from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from ..errors import BadInput
from ..store.ledger import Ledger
from ..store.transcripts import Stored, store_transcript
from . import claude_code, read
from .model import ROOT_KEY, Mode, NoTurns, Transcript, Turn


def without_open_tail(transcript: Transcript, quiet: bool) -> Transcript:
    """The transcript without the turns at its end that may still grow."""
    t = transcript
    while t.head != ROOT_KEY:
        turns = {x.key: x for x in t.turns}
        head = turns[t.head]
        if any(x.parent == head.key for x in t.turns) or \
                any(head.key in (c.last_covered, c.compacted_head) for c in t.compactions):
            break  # something follows it: it is done
        uses = [b["id"] for b in head.blocks if b["type"] == "tool_use"]
        if head.role == "assistant":
            growing = bool(uses) or not quiet
        elif head.role == "tool" and head.parent in turns:
            called = [b["id"] for b in turns[head.parent].blocks if b["type"] == "tool_use"]
            answered = {b["tool_use_id"] for b in head.blocks if b["type"] == "tool_result"}
            # Claude Code runs tools while a response streams: more of it may follow
            # (unless a later entry, held back, shows it ended).
            streaming = t.tool == claude_code.TOOL and not quiet and t is transcript
            growing = not set(called) <= answered or streaming
        else:
            growing = False
        if head.meta.get("recorded_before_results"):
            growing = _calls_open_before(head, turns)
        if not growing:
            break
        t = replace(t, turns=tuple(x for x in t.turns if x.key != head.key), head=head.parent)
    return t


def _calls_open_before(turn: Turn, turns: dict[str, Turn]) -> bool:
    """Whether the calls a turn recorded before their results (codex.py) still wait for
    some: the message before the waiting turns is the calling one or a partial answer."""
    while turn.meta.get("recorded_before_results") and turn.parent in turns:
        turn = turns[turn.parent]
    uses = [b["id"] for b in turn.blocks if b["type"] == "tool_use"]
    if turn.role == "assistant":
        return bool(uses)
    if turn.role == "tool" and turn.parent in turns:
        called = [b["id"] for b in turns[turn.parent].blocks if b["type"] == "tool_use"]
        return not set(called) <= {b["tool_use_id"] for b in turn.blocks
                                   if b["type"] == "tool_result"}
    return False


async def follow(ledger: Ledger, file: str, format: str | None, stop: asyncio.Event,
                 report: Callable[[Stored], None], *, interval: float = 0.5,
                 settle: float = 2.0, strict: bool = False) -> Stored | None:
    """Imports `file` as it grows until `stop` is set; the last import's result. (What
    it degrades is not listed: each import reads the whole file again.)"""
    path = Path(file)
    seen, changed_at, settled, last = -1, time.monotonic(), False, None
    while not stop.is_set():
        try:
            data = path.read_bytes()
        except OSError as e:
            raise BadInput(f"cannot read {file}: {e.strerror or e}") from e
        complete = data[:data.rfind(b"\n") + 1]
        quiet = time.monotonic() - changed_at >= settle
        if len(complete) != seen or (quiet and not settled):
            if len(complete) != seen:
                seen, changed_at, settled, quiet = len(complete), time.monotonic(), False, False
            else:
                settled = True
            stored = await _import(ledger, complete, file, format, quiet, strict)
            if stored is not None:
                last = stored
                if stored.changed:
                    report(stored)
        try:
            await asyncio.wait_for(stop.wait(), interval)
        except asyncio.TimeoutError:
            pass
    return last


async def _import(ledger: Ledger, complete: bytes, file: str, format: str | None,
                  quiet: bool, strict: bool) -> Stored | None:
    try:
        text = complete.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInput(f"{file} is not UTF-8 text (invalid byte at offset {e.start})") from None
    try:
        shaped = read(text, file, format, ledger.tenant, ledger.limits,
                      settle=lambda t: without_open_tail(t, quiet), mode=Mode(strict))
    except NoTurns:
        return None  # nothing to import yet
    return await store_transcript(ledger.db, ledger.tenant, shaped, ledger.limits,
                                  ledger.events)
