"""Following a transcript file while its tool appends to it (`ctxdag import-transcript
--follow FILE`), or a folder's files as its tool creates them and appends to them
(`--follow DIR`, or the tools' own folders: each is walked again at each poll, walk.py).

The file (and the sub-agent files Claude Code writes beside it, read with it as a folder
import reads them) is polled for its size; only complete lines are read (a line still being
written waits), and each time they grow the lines gained are read on from where the last
poll stopped (reading.py: a Claude Code parse goes on, unchanged turns keep their rows) and
the transcript is imported again, which stores only what it gained
(service/store/transcripts.py: from what the last import stored, not read back). A turn
still growing is held back, so no node is stored half-built: an assistant message at the
end may gain blocks, and a tool message may gain the results of the other parallel calls
(and until they are all in, the message that called them waits too, rather than being
given cancelled results; so do the lines a Codex rollout recorded between those calls and
their outputs); a Claude Code response may go on after the results of the tools it ran
while streaming, so its tool message at the end waits for the file to be quiet.
A reply without tool uses is let through once the file has been quiet for `settle`
seconds: the tool is then waiting for its user.
"""
from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import AsyncIterator, Callable

from ..errors import BadInput, Conflict, CtxdagError
from ..store.ledger import Ledger
from ..store.transcript_growth import grow_in_parts
from ..store.transcript_parts import import_in_parts
from ..store.transcripts import CONTENT, GROWTH_STATEMENTS, IMPORTED, Known, Stored, \
    store_known
from . import beside, claude_code, codex_names, new_in_parts, reading_of, streamed, subagents, \
    unchanged
from .model import ROOT_KEY, Mode, NotATranscript, NoTurns, Transcript, Turn, import_failed
from .streamed import STREAM_FROM_BYTES
from .jsonl import utf8
from .reading import Reading
from .walk import named_in_text, transcript_files


def without_open_tail(transcript: Transcript, quiet: bool) -> Transcript:
    """The transcript without the turns at its end that may still grow."""
    t = transcript
    turns = _Turns(t.turns)
    held: set[str] = set()
    head_key = t.head
    while head_key != ROOT_KEY:
        head = turns[head_key]
        if turns.followed(head.key, held) or \
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
            streaming = t.tool == claude_code.TOOL and not quiet and not held
            growing = not set(called) <= answered or streaming
        else:
            growing = False
        if head.meta.get("recorded_before_results"):
            growing = _calls_open_before(head, turns)
        if not growing:
            break
        held.add(head.key)
        head_key = head.parent
    if not held:
        return t
    # A sub-agent run the file holds inline waits with the message that spawned it (its
    # turns come after it, as every turn comes after those it hangs from).
    first = min(turns.position(key) for key in held)
    rest = t.turns[first:]
    held |= {x.key for x in rest if x.caller in held}
    return replace(t, turns=t.turns[:first] + tuple(x for x in rest if x.key not in held),
                   head=head_key, labels=tuple(x for x in t.labels if x.key not in held))


class _Turns:
    """A transcript's turns by key, looked up from its end (where what may still grow is):
    what is looked at costs what lies after it, not the transcript's length."""

    def __init__(self, turns: tuple[Turn, ...]) -> None:
        self.turns, self.at, self.scanned = turns, {}, len(turns)

    def position(self, key: str) -> int:
        while key not in self.at and self.scanned:
            self.scanned -= 1
            self.at[self.turns[self.scanned].key] = self.scanned
        return self.at[key]

    def __contains__(self, key: object) -> bool:
        if key == ROOT_KEY:
            return False
        try:
            self.position(str(key))
        except KeyError:
            return False
        return True

    def __getitem__(self, key: str) -> Turn:
        return self.turns[self.position(key)]

    def followed(self, key: str, held: set[str]) -> bool:
        """Whether a turn not `held` hangs from the turn `key`."""
        return any(x.parent == key and x.key not in held
                   for x in self.turns[self.position(key) + 1:])


def _calls_open_before(turn: Turn, turns: _Turns) -> bool:
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


# How long a folder's follower keeps what it read of a file its tool stopped writing to.
KEPT_IDLE = 600.0
# The bytes at each end of what a Follower read that it reads again before it reads on: a
# file whose tool truncated or rewrote it (not only appended to it) is read again whole.
_WINDOW = 4096


class Follower:
    """One file followed, with the sub-agent files beside it (subagents.py): each `poll`
    imports what they gained since the last (their complete lines), or its closing reply
    once they have been quiet for `settle` seconds. Its first import of a file that holds
    nothing new since it was imported is recognised by its fingerprint, unparsed.

    It keeps its Reading of the file (reading.py) and reads on from where it stopped, so a
    growth parses only the lines the file gained; and what its last import stored
    (store.transcripts.Known), so storing a growth does not read back which of the
    session's nodes are stored. A file that is no longer what was read (shorter, another
    file under the name, other bytes at either end of what was read) is read again whole,
    as is one after an import that failed."""

    def __init__(self, ledger: Ledger, file: str, format: str | None, strict: bool,
                 idle: float | None = None):
        """`idle`: what was read of a file its tool has not written to for that many
        seconds is let go (read again whole when it grows); None: kept while followed."""
        self.ledger, self.file, self.format, self.strict = ledger, file, format, strict
        self.idle = idle
        self.size: tuple = ()
        self.seen: tuple = ()
        self.changed_at, self.settled = time.monotonic(), False
        self.last: Stored | None = None
        self.reading: Reading | None = None
        self.read_to = 0  # bytes of complete lines fed to `reading`
        self.read_hash = hashlib.sha256()  # of those bytes
        self.ends = (b"", b"", 0)  # the first and last bytes read, and the file's inode
        self.known: Known | None = None

    async def poll(self, settle: float) -> Stored | None:
        """The import's result when it changed the session; None otherwise."""
        path = Path(self.file)
        try:
            watched = subagents.watched_files(self.file) + _index_of(self.file)
            stat = path.stat()
            size = (stat.st_size,) + tuple(
                (str(p), p.stat().st_size) for p in watched if p.exists())
            quiet = time.monotonic() - self.changed_at >= settle
            self._let_go_if_idle(stat)
            if size == self.size and (self.settled or not quiet):
                return None
            appended = self.reading is not None and self._appended(path, stat)
            data = _read_from(path, self.read_to if appended else 0)
        except OSError as e:
            raise BadInput(f"cannot read {self.file}: {e.strerror or e}") from e
        self.size = size
        complete = data[:data.rfind(b"\n") + 1]
        seen = ((self.read_to if appended else 0) + len(complete),) + size[1:]
        if seen == self.seen and (self.settled or not quiet):
            return None  # only a line still being written grew
        first = not self.seen
        if seen != self.seen:
            if seen[:1] != self.seen[:1]:  # the session file's own tail may grow on
                self.changed_at, quiet = time.monotonic(), False
            self.seen, self.settled = seen, quiet
        else:
            self.settled = True
        try:
            if not appended and first and len(complete) >= STREAM_FROM_BYTES:
                self.reading, self.known = None, None
                handled, stored = await self._in_parts(complete, stat, quiet)
                if handled:
                    if stored is None:
                        return None
                    self.last = stored
                    return stored if stored.changed else None
            text = utf8(complete, self.file, self.read_to if appended else 0)
            if not appended:
                self.reading, self.known = None, None
                if not text.strip():
                    return None  # created, nothing written in it yet
                if first:
                    held = await unchanged(self.ledger, text, self.file, self.format,
                                           _complete_text, self.strict)
                    if held is not None:
                        self.last, self.settled = held, True
                        return None
                self.reading = reading_of(text, self.file, self.format, self.ledger.tenant,
                                          self.ledger.limits, self.strict)
                self._read(complete, stat.st_ino, restart=True)
            elif complete:
                self.reading.feed(text)
                self._read(complete, stat.st_ino)
            stored = await self._store(quiet, None if appended else text)
        except Exception:
            self.reading, self.known = None, None  # read again whole once the file changes
            self.settled = True  # tried again once the file changes
            raise
        finally:
            self._let_go_if_idle(stat)
        if stored is None:
            return None
        self.last = stored
        return stored if stored.changed else None

    async def _in_parts(self, complete: bytes, stat: os.stat_result, quiet: bool
                        ) -> tuple[bool, Stored | None]:
        """A large file's first poll: read from its `complete` lines a part at a time, its
        growing tail held back, and stored in parts as a folder import stores it
        (streamed.py): its new session, or what it gained since its session was imported
        (store/transcript_growth.py). So the follower never holds its document (and keeps
        the rows built only for a file its tool writes to: its growths take them). (True,
        what it stored) when it stored, (True, None) when it holds it unchanged, (False,
        None) when the file is to be read whole (new_in_parts says when, or its format is
        not told by its first line, or it holds no settled turn yet)."""
        ledger = self.ledger
        found = await asyncio.to_thread(streamed.complete_read_as, complete, self.file,
                                        self.format, self.strict, _complete_text)
        if found is None:
            return False, None
        tool, read_as = found
        mode = Mode(self.strict)

        def read(prefix: int | None = None) -> streamed.Streamed:
            return streamed.read_complete(
                complete, self.file, tool, ledger.tenant, ledger.limits, mode, _complete_text,
                lambda t: without_open_tail(t, quiet), not self._idle(stat), prefix=prefix)

        try:
            ready = await new_in_parts(
                ledger, tool, read_as, lambda: streamed.session_key_of(self.file, tool), read,
                mode, read)
        except NoTurns:
            return False, None
        if ready is None:
            return False, None
        if not isinstance(ready, streamed.Streamed):  # held unchanged
            self.last, self.settled = ready, True
            return True, None
        if ready.grows:
            stored, self.known = await grow_in_parts(ledger.db, ledger.tenant, ready,
                                                     ledger.limits, ledger.events)
        else:
            stored, self.known = await import_in_parts(ledger.db, ledger.tenant, ready,
                                                       ledger.limits)
        self.reading = ready.reading  # kept, its turns set aside (streamed.read_complete)
        self._read(complete, stat.st_ino, restart=True)
        return True, stored

    def _let_go_if_idle(self, stat: os.stat_result) -> None:
        """A folder's files are many, and most of them done with: a follower holds the
        parse of a file only while its tool wrote to it in the last `idle` seconds."""
        if self._idle(stat):
            self.reading, self.known = None, None

    def _idle(self, stat: os.stat_result) -> bool:
        return self.idle is not None and time.time() - stat.st_mtime > self.idle

    def _appended(self, path: Path, stat: os.stat_result) -> bool:
        """Whether the file is the one read, only appended to since."""
        first, last, inode = self.ends
        if stat.st_ino != inode or stat.st_size < self.read_to:
            return False
        with path.open("rb") as f:
            if f.read(len(first)) != first:
                return False
            f.seek(self.read_to - len(last))
            return f.read(len(last)) == last

    def _read(self, complete: bytes, inode: int, restart: bool = False) -> None:
        if restart:
            self.read_to, self.read_hash = 0, hashlib.sha256()
            self.ends = (complete[:_WINDOW], b"", inode)
        self.read_to += len(complete)
        self.read_hash.update(complete)
        last = (self.ends[1] + complete)[-_WINDOW:]
        self.ends = (self.ends[0], last, inode)

    async def _store(self, quiet: bool, text: str | None) -> Stored | None:
        """Stores the document of all that was read; `text`: all of it, when it was read
        whole (checked against what the session was imported from)."""
        assert self.reading is not None
        ledger = self.ledger
        try:
            side = beside(self.file, self.reading.tool, _complete_text)
            shaped = self.reading.document(Mode(self.strict), side.agents,
                                           lambda t: without_open_tail(t, quiet), side.named)
        except NoTurns:
            return None  # nothing to import yet
        if text is None:
            shaped[IMPORTED] = {"bytes": self.read_to, "sha256": self.read_hash.hexdigest()}
        else:
            shaped[CONTENT] = text
        result = await store_known(ledger.db, ledger.tenant, shaped, ledger.limits,
                                   ledger.events, self.known)
        if result is None:  # the session is not as the last import left it
            shaped.pop(IMPORTED, None)
            shaped[CONTENT] = self._read_again()
            result = await store_known(ledger.db, ledger.tenant, shaped, ledger.limits,
                                       ledger.events, None)
            assert result is not None
        stored, self.known = result
        return stored

    def _read_again(self) -> str:
        """The text read so far, from the file again (to check it against what the session
        was imported from); Conflict when the file no longer holds it."""
        try:
            with Path(self.file).open("rb") as f:
                data = f.read(self.read_to)
        except OSError as e:
            raise BadInput(f"cannot read {self.file}: {e.strerror or e}") from e
        if hashlib.sha256(data).hexdigest() != self.read_hash.hexdigest():
            raise Conflict(f"{self.file}: the file changed while it was read; it is read "
                           "again whole")
        return utf8(data, self.file)


async def follow(ledger: Ledger, file: str, format: str | None, stop: asyncio.Event,
                 report: Callable[[Stored], None], *, interval: float = 0.5,
                 settle: float = 2.0, strict: bool = False) -> Stored | None:
    """Imports `file` as it grows until `stop` is set; the last import's result. (What
    it degrades is not listed.)"""
    named_in_text(file)
    follower = Follower(ledger, file, format, strict)
    async with _growth_planned(ledger):
        while not stop.is_set():
            stored = await follower.poll(settle)
            if stored is not None:
                report(stored)
            _kept()
            await _wait(stop, interval)
    return follower.last


async def follow_folder(ledger: Ledger, folders: list[str], format: str | None,
                        stop: asyncio.Event, report: Callable[[str, Stored], None],
                        failed: Callable[[str, CtxdagError], None], *,
                        after: float | None = None, interval: float = 0.5,
                        settle: float = 2.0, strict: bool = False) -> dict[str, Stored]:
    """Follows every transcript file of the `folders` (walk.py: changed at `after` or
    later), the files created in them meanwhile too, until `stop` is set; the last import
    of each. A file that fails is reported (`failed`) and tried again when it changes; a
    file of no transcript format is passed over (until it changes)."""
    followers: dict[str, Follower] = {}
    async with _growth_planned(ledger):
        await _follow_files(ledger, folders, format, stop, report, failed, followers, after,
                            interval, settle, strict)
    return {file: f.last for file, f in followers.items() if f.last is not None}


async def _follow_files(ledger: Ledger, folders: list[str], format: str | None,
                        stop: asyncio.Event, report: Callable[[str, Stored], None],
                        failed: Callable[[str, CtxdagError], None],
                        followers: dict[str, Follower], after: float | None, interval: float,
                        settle: float, strict: bool) -> None:
    refused: set[str] = set()  # files named in no text, told once
    gone: set[str] = set()  # folders told gone, once until they are back
    while not stop.is_set():
        for folder in folders:
            if Path(folder).is_dir():
                gone.discard(folder)
            elif folder not in gone:
                gone.add(folder)
                failed(folder, BadInput(f"{folder}: the folder is gone; its files are "
                                        "followed again once it is back", file=folder))
        here = [folder for folder in folders if folder not in gone]
        for file in transcript_files(here, after).files if here else ():
            if file not in followers and file not in refused:
                try:
                    named_in_text(file)
                except BadInput as e:
                    refused.add(file)
                    failed(file, e)
                    continue
                followers[file] = Follower(ledger, file, format, strict, KEPT_IDLE)
        for file, follower in list(followers.items()):
            if stop.is_set():
                break
            try:
                stored = await follower.poll(settle)
            except NotATranscript:
                continue  # of something else (tried again when it changes)
            except Exception as e:  # a fault of the importer's too: it goes on with the others
                if not Path(file).exists():
                    del followers[file]  # removed by its tool: nothing more to follow
                failed(file, e if isinstance(e, CtxdagError) else import_failed(file, e))
                continue
            if stored is not None:
                report(file, stored)
        _kept()
        await _wait(stop, interval)


@contextlib.asynccontextmanager
async def _growth_planned(ledger: Ledger) -> AsyncIterator[None]:
    """Has Neo4j plan the statements storing a growth while the block first imports the
    files: the first growth then does not wait for their plans. A plan that fails costs
    only that wait."""
    planning = asyncio.create_task(ledger.db.plan_statements(GROWTH_STATEMENTS))
    try:
        yield
    finally:
        planning.cancel()
        await asyncio.gather(planning, return_exceptions=True)


def _kept() -> None:
    """What the followers hold (a long file's parse and rows) is left out of the garbage
    collector's full passes, which would otherwise walk all of it again every few growths
    (a pause of a tenth of a second or more for a session of 10,000 lines): the process
    follows files and does nothing else."""
    gc.freeze()


async def _wait(stop: asyncio.Event, interval: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), interval)
    except asyncio.TimeoutError:
        pass


def _read_from(path: Path, offset: int) -> bytes:
    with path.open("rb") as f:
        f.seek(offset)
        return f.read()


def _index_of(file: str) -> list[Path]:
    """Codex's thread index, when `file` is a rollout in a Codex home: a thread named while
    it is followed is named in its session too."""
    index = codex_names.index_of(file)
    return [] if index is None else [index]


def _complete_text(file: str) -> str:
    """A side file's complete lines (a sidecar whole): a line still being written waits."""
    try:
        data = Path(file).read_bytes()
    except OSError as e:
        raise BadInput(f"cannot read {file}: {e.strerror or e}") from e
    return utf8(data if file.endswith(".json") else data[:data.rfind(b"\n") + 1], file)
