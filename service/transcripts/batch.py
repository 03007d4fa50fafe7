"""`ctxdag import-transcript PATH…`: each transcript file of the paths (walk.py) read and
stored on its own, one transaction each, so a walk stopped at any point (killed even)
leaves every file whole or untouched and the next run goes on where it stopped. A file
(with its sub-agents' files) that holds nothing new since its import is recognised by its
fingerprint, unparsed. A file that fails is reported and the walk goes on; a file a folder
holds that is no transcript, or none yet, is passed over. Each file gets a line, the walk a
summary.

The walk is a pipeline of two: while Neo4j writes one file, the next is read, parsed and
(when its session is new) checked in a worker thread, so the two cores work at once.

With a Shelf (kept.py), a file seen to grow, or written to in the last day, keeps its
reading for its next import, which then parses only the lines it gained.
"""
from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, TextIO

from ..errors import CtxdagError
from ..model.validate import counted
from ..store.ledger import Ledger
from ..store.backup import Checked
from ..store.pending_imports import clear_abandoned
from ..store.transcript_growth import grow_in_parts
from ..store.transcript_parts import import_in_parts
from ..store.transcripts import (Stored, first_import_check, known_if_imported,
                                 session_held, store_known, stored_import, store_transcript,
                                 stored_unchanged)
from . import document_of, new_in_parts, reading_of, streamed, unchanged
from .kept import KeptReading, Shelf, kept_of, packed, recent
from .model import Degraded, Mode, NoTurns, NotATranscript, import_failed
from .progress import Progress
from .reading import Reading
from .streamed import Streamed, streams
from .walk import Found, named_in_text, transcript_files

DEGRADED_SHOWN = 10  # entries listed one by one; the rest are counted


@dataclass
class Tally:
    new: int = 0
    grown: int = 0
    unchanged: int = 0
    failed: int = 0
    passed_over: int = 0
    degraded: int = 0

    def stored(self, stored: Stored) -> None:
        if stored.created:
            self.new += 1
        elif stored.changed:
            self.grown += 1
        else:
            self.unchanged += 1


async def import_paths(ledger: Ledger, paths: list[str], format: str | None, strict: bool,
                       after: float | None, read_text: Callable[[str], str],
                       out: TextIO | None = None, err: TextIO | None = None,
                       shelf: Shelf | None = None) -> int:
    """Imports the transcripts of `paths` (changed at `after` or later, when given); the exit
    status: 1 when a file failed. `shelf`: where the readings of files likely to grow are
    kept (none kept without it)."""
    out, err = out or sys.stdout, err or sys.stderr
    abandoned = await clear_abandoned(ledger.db, ledger.tenant)
    if abandoned:
        print(f"cleared what {abandoned} import(s) stopped midway by an earlier run left "
              "written", file=out, flush=True)
    found = transcript_files(paths, after)
    sizes = [_size(file) for file in found.files]
    progress, tally, named = Progress(err, len(sizes), sum(sizes)), Tally(), set(paths)

    def prepare(index: int) -> asyncio.Task[Ready] | None:
        if index >= len(found.files):
            return None
        return asyncio.create_task(ready(ledger, found.files[index], format, strict, read_text,
                                         shelf))

    upcoming = prepare(0)
    for index, (file, size) in enumerate(zip(found.files, sizes)):
        progress.draw()
        file_ready = await upcoming
        upcoming = prepare(index + 1)
        lines, entries = await _import_one(ledger, file_ready, file in named, tally, shelf)
        progress.clear()
        for line, to_err in lines:
            print(line, file=err if to_err else out, flush=True)
        progress.advance(size, entries)
    progress.clear()
    print(summary(tally, found), file=out, flush=True)
    return 1 if tally.failed else 0


@dataclass
class Ready:
    """One file as the walk stores it: its text and what was made of it before."""

    file: str
    mode: Mode
    text: str = ""
    held: Stored | None = None  # the session holds it all: nothing to store
    document: dict[str, Any] | None = None
    checked: Checked | None = None  # the document's first-import check, its session new
    reading: Reading | None = None  # what made the document
    kept: KeptReading | None = None  # the reading kept of the file, read on
    packed: bytes | None = None  # a new session's reading, to keep once it is stored
    streamed: Streamed | None = None  # a large file's, stored in parts (or its growth)
    lines_read: int | None = None  # of a file read a part at a time (its text not held)
    given: bool = False  # its text was given (importTranscript): its reading is kept
    error: CtxdagError | None = None

    @property
    def lines(self) -> int:
        return self.lines_read if self.lines_read is not None else self.text.count("\n")


async def ready(ledger: Ledger, file: str, format: str | None, strict: bool,
                read_text: Callable[[str], str] | None, shelf: Shelf | None = None,
                given: str | None = None, mode: Mode | None = None) -> Ready:
    """The file read (or its text `given`), recognised as held or parsed (and, for a new
    session, checked) in a worker thread; an error is kept for the store's turn, so files
    are reported in order. A new session's reading is kept when the file was written to
    lately or its text was given (importTranscript: a client sending a session it goes on
    with)."""
    prepared = Ready(file, mode if mode is not None else Mode(strict))
    try:
        named_in_text(file)
        if given is None and read_text is not None and streams(file):
            if shelf is not None and shelf.holds(file, strict):
                if await _ready_kept(ledger, prepared, format, read_text, shelf):
                    return prepared
            elif await _ready_streamed(ledger, prepared, format, read_text,
                                       keeps=shelf is not None and recent(file)):
                return prepared
        if given is not None:
            prepared.text = given
            if len(given) >= streamed.STREAM_FROM_BYTES and \
                    (shelf is None or not shelf.holds(file, strict)) and \
                    await _ready_given(ledger, prepared, format, keeps=shelf is not None):
                return prepared
        else:
            assert read_text is not None
            prepared.text = await asyncio.to_thread(read_text, file)
        prepared.held = await unchanged(ledger, prepared.text, file, format, read_text, strict)
        if prepared.held is not None:
            return prepared
        prepared.document = await asyncio.to_thread(
            _parsed, prepared, ledger, format, read_text, shelf)
        if prepared.kept is None and \
                not await session_held(ledger.db, ledger.tenant, prepared.document):
            if shelf is not None and (given is not None or recent(file)):  # likely to grow
                prepared.packed = await asyncio.to_thread(_packed, prepared)
            prepared.reading = None  # its parse let go before the store
            prepared.checked = await asyncio.to_thread(first_import_check, prepared.document,
                                                       ledger.limits)
    except CtxdagError as e:
        prepared.error = e
    except Exception as e:  # a fault of the importer's: the walk goes on with the next file
        prepared.error = import_failed(file, e)
    return prepared


async def _ready_streamed(ledger: Ledger, prepared: Ready, format: str | None,
                          read_text: Callable[[str], str], keeps: bool) -> bool:
    """A large file made ready as streamed.py reads it: recognised as held by its
    fingerprint, else read a part at a time and planned, its turns' blocks set aside on
    disk, its reading kept if it `keeps` (kept.py); a file whose session exists (grown since
    its import) is read so too, as a growth. False when it is to be read whole instead
    (new_in_parts says when), or its first part does not tell its format."""
    file, mode = prepared.file, prepared.mode
    found = await asyncio.to_thread(streamed.read_as, file, format, mode.strict, read_text)
    if found is None:
        return False
    tool, read_as, lines = found
    ready = await new_in_parts(
        ledger, tool, read_as, lambda: streamed.session_key_of(file, tool),
        lambda: streamed.read(file, tool, ledger.tenant, ledger.limits, mode, read_text,
                              spill=True, keep=keeps), mode,
        lambda imported: streamed.read(file, tool, ledger.tenant, ledger.limits, mode,
                                       read_text, spill=True, keep=keeps, prefix=imported))
    return _take(prepared, ready, lines)


async def _ready_kept(ledger: Ledger, prepared: Ready, format: str | None,
                      read_text: Callable[[str], str], shelf: Shelf) -> bool:
    """A large file whose reading is kept made ready as a growth read on from it
    (streamed.read_on: only the lines it gained parsed, its rows compared with the stored
    ones a part at a time), or recognised as held by its fingerprint. False when it is to
    be read whole instead: the reading does not name a stored session imported from noted
    bytes, or the file no longer begins with what it read (the reading is then dropped)."""
    file, mode = prepared.file, prepared.mode
    found = await asyncio.to_thread(streamed.read_as, file, format, mode.strict, read_text)
    if found is None:
        return False
    tool, read_as, lines = found
    held = await stored_unchanged(ledger.db, ledger.tenant, read_as)
    if held is not None:
        return _take(prepared, held, lines)
    kept = await asyncio.to_thread(shelf.load, file, mode.strict)
    if kept is None or kept.known is None or kept.reading.tool != tool:
        return False
    stored, imported = await stored_import(ledger.db, ledger.tenant, kept.known.session_id)
    if not stored or imported is None:
        return False
    try:
        planned = await asyncio.to_thread(streamed.read_on, kept, file, tool, mode, read_text,
                                          imported["bytes"])
    except Exception:
        shelf.drop(file, mode.strict)  # the reading is unusable now: read the file again
        raise
    if planned is None:
        shelf.drop(file, mode.strict)
        return False
    planned.grows = True
    return _take(prepared, planned, lines)


async def _ready_given(ledger: Ledger, prepared: Ready, format: str | None,
                       keeps: bool) -> bool:
    """A large text given whole made ready to be stored in parts, as a large file is (its
    size counted in characters, each at least a byte): recognised as held by its
    fingerprint, else planned, its turns' blocks set aside, its reading kept if it `keeps`.
    False when its session exists: it is read as a growth."""
    mode = prepared.mode
    tool, read_as = await asyncio.to_thread(streamed.given_read_as, prepared.text,
                                            prepared.file, format, mode.strict)
    ready = await new_in_parts(ledger, tool, read_as, None, lambda: streamed.read_given(
        prepared.text, prepared.file, format, ledger.tenant, ledger.limits, mode,
        spill=True, keep=keeps), mode)
    prepared.given = isinstance(ready, Streamed)
    return _take(prepared, ready, None)


def _take(prepared: Ready, ready: Stored | Streamed | None, lines: int | None) -> bool:
    """What new_in_parts made of a large text, taken into `prepared`: False when it is
    to be read whole."""
    if ready is None:
        return False
    if isinstance(ready, Streamed):
        prepared.streamed = ready
    else:
        prepared.held = ready
    prepared.lines_read = lines
    return True


async def import_text(ledger: Ledger, text: str, file: str, format: str | None,
                      mode: Mode | None = None, shelf: Shelf | None = None) -> Stored:
    """One transcript given as `text` (importTranscript; no side files) stored in the
    ledger's tenant as the walk stores a file: a new session, the entries it gained since it
    was imported, or nothing when it holds them all (a text its session was last imported
    from, read whole and nothing degraded, recognised by its fingerprint unparsed). What it
    degraded is in `mode`. With a shelf and a file name, its reading is kept under that
    name, so the same name's next, grown text parses only the lines it gained."""
    mode = mode if mode is not None else Mode()
    shelf = shelf if file else None  # a reading is kept under a name
    prepared = await ready(ledger, file, format, mode.strict, None, shelf, given=text,
                           mode=mode)
    if prepared.error is not None:
        raise prepared.error
    if prepared.held is not None:
        return prepared.held
    return await _stored(ledger, prepared, shelf)


def _packed(prepared: Ready) -> bytes | None:
    """A new session's reading as the shelf keeps it, with what importing it whole stores."""
    assert prepared.reading is not None and prepared.document is not None
    if not prepared.text.endswith("\n"):
        return None  # a last line being written: read whole next time
    return packed(kept_of(prepared.reading, known_if_imported(prepared.document),
                          prepared.text))


def _parsed(prepared: Ready, ledger: Ledger, format: str | None,
            read_text: Callable[[str], str] | None, shelf: Shelf | None) -> dict[str, Any]:
    """The file's document: of the reading kept of it read on with the lines it gained, or
    of the text read whole."""
    file, text, strict = prepared.file, prepared.text, prepared.mode.strict
    taken = shelf.take(file, strict, text) \
        if shelf is not None and text.endswith("\n") else None
    if taken is not None:
        kept, gained = taken
        try:
            kept.reading.feed(gained)
            prepared.reading, prepared.kept = kept.reading, kept
            return document_of(kept.reading, text, read_text, prepared.mode)
        except Exception:
            shelf.drop(file, strict)  # the reading is unusable now: read the file again
            raise
    prepared.reading = reading_of(text, file, format, ledger.tenant, ledger.limits, strict)
    return document_of(prepared.reading, text, read_text, prepared.mode)


async def _import_one(ledger: Ledger, prepared: Ready, named: bool, tally: Tally,
                      shelf: Shelf | None = None) -> tuple[list[tuple[str, bool]], int]:
    """What to say of one file ((line, on stderr) each) and how many lines it held."""
    file, mode = prepared.file, prepared.mode
    try:
        if prepared.error is not None:
            raise prepared.error
        stored = prepared.held
        if stored is None:
            stored = await _stored(ledger, prepared, shelf)
    except (NoTurns, NotATranscript) as e:
        if named:
            tally.failed += 1
            return [(f"error: {e}", True)], prepared.lines
        tally.passed_over += 1
        return [(f"{file}: passed over: {_reason(e.message, file)}", False)], prepared.lines
    except CtxdagError as e:
        tally.failed += 1
        return [(f"error: {e}", True)], prepared.lines
    except Exception as e:  # a fault of the importer's (what it wrote is cleared): go on
        tally.failed += 1
        return [(f"error: {import_failed(file, e)}", True)], prepared.lines
    tally.stored(stored)
    tally.degraded += len(mode.degraded)
    return ([(imported(file, stored), False)]
            + [(line, False) for line in degraded(file, mode.degraded)]), prepared.lines


async def _stored(ledger: Ledger, prepared: Ready, shelf: Shelf | None) -> Stored:
    """The file's document stored; with a shelf, the reading of a file that grew kept."""
    if prepared.streamed is not None:
        return await _stored_in_parts(ledger, prepared, shelf)
    document, kept = prepared.document, prepared.kept
    assert document is not None
    if prepared.checked is not None:  # a new session: its reading kept if it is recent
        stored = await store_transcript(ledger.db, ledger.tenant, document, ledger.limits,
                                        ledger.events, prepared.checked)
        if shelf is not None and prepared.packed is not None and stored.created:
            await asyncio.to_thread(shelf.put, prepared.file, prepared.mode.strict,
                                    prepared.packed)
        return stored
    result = None
    if kept is not None:
        result = await store_known(ledger.db, ledger.tenant, document, ledger.limits,
                                   ledger.events, kept.known)
    if result is None:  # no reading kept, or the session is not as it left it
        result = await store_known(ledger.db, ledger.tenant, document, ledger.limits,
                                   ledger.events, None)
    assert result is not None
    stored, known = result
    if shelf is None:
        return stored
    if stored.created or not prepared.text.endswith("\n"):
        shelf.drop(prepared.file, prepared.mode.strict)
    elif prepared.reading is not None:
        keeping = kept_of(prepared.reading, known, prepared.text)
        if kept is None or keeping.read_to > kept.read_to or stored.changed:
            await asyncio.to_thread(shelf.keep, prepared.file, prepared.mode.strict, keeping)
    return stored


async def _stored_in_parts(ledger: Ledger, prepared: Ready, shelf: Shelf | None) -> Stored:
    """A large file's new session stored in parts, or what it gained since its import
    stored a part at a time; its reading (not its rows) kept when the file is recent and
    ends at a line's end."""
    planned = prepared.streamed
    assert planned is not None
    if planned.grows:
        stored, known = await grow_in_parts(ledger.db, ledger.tenant, planned, ledger.limits,
                                            ledger.events)
    else:
        stored, known = await import_in_parts(ledger.db, ledger.tenant, planned,
                                              ledger.limits)
    prepared.mode.degraded.sort(key=lambda d: (d.file != prepared.file, d.file, d.line))
    if shelf is not None and planned.complete and planned.reading is not None and \
            (prepared.given or recent(prepared.file)):
        await asyncio.to_thread(shelf.keep, prepared.file, prepared.mode.strict, KeptReading(
            planned.reading, known, planned.imported["bytes"], planned.imported["sha256"]))
    return stored


def _reason(message: str, file: str) -> str:
    return message[len(f"{file}:1: "):] if message.startswith(f"{file}:1: ") else message


def _size(file: str) -> int:
    try:
        return 0 if file == "-" else Path(file).stat().st_size
    except OSError:
        return 0  # its read says why


def summary(tally: Tally, found: Found) -> str:
    files = tally.new + tally.grown + tally.unchanged + tally.failed + tally.passed_over
    parts = [f"{tally.new} new", f"{tally.grown} grown", f"{tally.unchanged} unchanged"]
    if tally.failed:
        parts.append(f"{tally.failed} failed")
    if tally.passed_over:
        parts.append(f"{tally.passed_over} passed over")
    said = f"{counted(files, 'file')}: " + ", ".join(parts)
    if tally.degraded:
        said += (f"; {counted(tally.degraded, 'entry', 'entries')} skipped or degraded "
                  "(listed above)")
    if found.older:
        said += f"; {counted(found.older, 'file')} older than --since left out"
    if found.side_files:
        said += f"; {counted(found.side_files, 'sub-agent file')} (read with their sessions)"
    return said


def degraded(file: str, entries: list[Degraded]) -> list[str]:
    """What an import could not map, for its summary: counts by kind, then the first
    entries by file:line."""
    if not entries:
        return []
    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.kind.value] = counts.get(entry.kind.value, 0) + 1
    lines = [f"{file}: {counted(len(entries), 'entry', 'entries')} degraded ("
             + ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())) + ")"]
    lines += [f"  {entry.file}:{entry.line}: {entry.kind.value}: {entry.reason}"
              for entry in entries[:DEGRADED_SHOWN]]
    if len(entries) > DEGRADED_SHOWN:
        lines.append(f"  … and {len(entries) - DEGRADED_SHOWN} more")
    return lines


def imported(file: str, stored: Any) -> str:
    if stored.created:
        return f"{file}: imported as session {stored.session_id} ({counted(stored.nodes, 'node')})"
    if stored.changed and not (stored.written or stored.relabeled):
        return f"{file}: session {stored.session_id} gained no nodes; its title or source changed"
    if stored.changed:
        relabeled = f", {counted(stored.relabeled, 'label')} set or cleared" \
            if stored.relabeled else ""
        return (f"{file}: session {stored.session_id} gained {counted(stored.written, 'node')}"
                f"{relabeled}")
    return f"{file}: session {stored.session_id} holds it already; nothing written"
