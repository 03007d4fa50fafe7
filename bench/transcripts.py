"""Workload 13: importing a Claude Code transcript (`ctxdag import-transcript`'s path).

The transcript is generated as Claude Code writes one: a user prompt, then rounds of an
assistant response written as one record per block (thinking with its signature, a line
of text, a tool call), each answered by a tool_result record of about 1,200 characters;
every eighth round the assistant reports and the user asks the next thing. Measured:
entries per second of the first import (parsing, the backup document, the one-statement
import) and of its parse alone; re-imports as importTranscript makes them
(transcripts.batch.import_text): of the unchanged file (recognised by its fingerprint, unparsed)
and two of the file grown by 1% (the first plans the extension statement, the second
finds its plan cached); and the store's
bytes per imported message (a restart before and after, as workload 7 measures).
"""
from __future__ import annotations

import json
import time
from typing import Any

from service import transcripts
from service.store.transcripts import store_transcript
from service.transcripts.batch import import_text

from .agent import _result_text
from .content import assistant_text, user_text
from .core import Bench
from .storage import checkpoint

S13 = "13 transcript import (Claude Code)"
SESSION = "bench-transcript"


def claude_code_transcript(entries: int) -> list[str]:
    """`entries` Claude Code records (JSON lines), a chain as the tool writes it."""
    lines: list[str] = []
    parent: str | None = None
    i = 0

    def record(kind: str, content: Any, message_id: str | None = None) -> None:
        nonlocal parent
        uuid = f"e{len(lines):07d}"
        message: dict[str, Any] = {"role": "user" if kind == "user" else "assistant",
                                   "content": content}
        if message_id:
            message.update(id=message_id, model="claude-sonnet-4-5", type="message",
                           usage={"input_tokens": 1200, "output_tokens": 80})
        lines.append(json.dumps({
            "type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION,
            "timestamp": f"2025-08-01T{len(lines) // 3600 % 24:02d}:{len(lines) // 60 % 60:02d}"
                         f":{len(lines) % 60:02d}.000Z",
            "isSidechain": False, "userType": "external", "cwd": "/work/app",
            "version": "2.1.80", "message": message}))
        parent = uuid

    record("user", user_text(0))
    while len(lines) < entries:
        mid = f"msg_{i:06d}"
        if i % 8 == 7:
            record("assistant", [{"type": "text", "text": assistant_text(i)}], mid)
            record("user", user_text(i))
        else:
            use = f"toolu_{i:06d}"
            record("assistant", [{"type": "thinking", "thinking": assistant_text(i)[:400],
                                  "signature": f"EqQBCkgIAxABGAIiQL{i:08d}" + "x" * 80}], mid)
            record("assistant", [{"type": "text", "text": user_text(i)[:120]}], mid)
            record("assistant", [{"type": "tool_use", "id": use, "name": "read_file",
                                  "input": {"path": f"src/module_{i % 40}.py"}}], mid)
            record("user", [{"type": "tool_result", "tool_use_id": use,
                             "content": _result_text(i)}])
        i += 1
    return [line + "\n" for line in lines[:entries]]


async def transcript_import(b: Bench) -> None:
    entries = b.sizes.transcript_entries
    lines = claude_code_transcript(entries)
    text = "".join(lines)
    file = f"{SESSION}-{b.tenant}.jsonl"
    ledger = b.ledger

    def read(body: str) -> dict[str, Any]:
        return transcripts.read(body, file, None, ledger.tenant, ledger.limits)

    async def store(document: dict[str, Any]):
        return await store_transcript(ledger.db, ledger.tenant, document, ledger.limits,
                                      ledger.events)

    import tempfile
    from pathlib import Path

    from service.transcripts.kept import Shelf

    readings = tempfile.TemporaryDirectory(prefix="bench-13-readings-")
    shelf = Shelf(Path(readings.name), "server bench", ledger.tenant, ledger.limits,
                  freeze=False)

    async def reimport(body: str):
        """As importTranscript does with a fileName: the unchanged text recognised before
        it is parsed, a grown one read on from the reading the server kept of it."""
        return await import_text(ledger, body, file, None, shelf=shelf)

    statements = _statement_times(ledger.db)

    t0 = time.perf_counter()
    document = read(text)
    parsed = time.perf_counter() - t0
    before = await checkpoint(b)
    t0 = time.perf_counter()
    stored = await store(document)
    imported = time.perf_counter() - t0 + parsed
    first_statements = statements.taken()
    after = await checkpoint(b)
    messages = stored.nodes - 1  # ROOT apart
    b.add(S13, f"first import, {entries:,} entries", None, None,
          value=round(entries / imported), unit="entries/s",
          note=f"{imported:.2f} s: parse and document {parsed:.2f} s "
               f"({entries / parsed:,.0f} entries/s), store {imported - parsed:.2f} s "
               f"({first_statements}; the rest validation); {messages:,} messages")
    # The same records under another name are another session: imported with every
    # statement's plan cached, as a served import or a --follow after the first one is.
    other = f"{SESSION}-{b.tenant}-planned.jsonl"
    t0 = time.perf_counter()
    second = transcripts.read(text, other, None, ledger.tenant, ledger.limits)
    second_parsed = time.perf_counter() - t0
    await store(second)
    planned = time.perf_counter() - t0
    b.add(S13, f"first import of another file, {entries:,} entries, plans cached", None, None,
          value=round(entries / planned), unit="entries/s",
          note=f"{planned:.2f} s: parse and document {second_parsed:.2f} s, store "
               f"{planned - second_parsed:.2f} s ({statements.taken()}; the rest validation)")
    store_bytes = after["store"] - before["store"]
    b.add(S13, f"store bytes per imported message ({messages:,})", None, None,
          value=round(store_bytes / messages), unit="bytes/message",
          note=f"store +{store_bytes / 1e6:.1f} MB; the file holds "
               f"{len(text.encode()) / messages:,.0f} B/message (thinking signatures, "
               "usage and envelopes repeated per record)")
    statements.taken()
    t0 = time.perf_counter()
    again = await reimport(text)
    unchanged = time.perf_counter() - t0
    unchanged_statements = statements.taken()
    t0 = time.perf_counter()
    await reimport(text)
    unchanged_again = time.perf_counter() - t0
    unchanged_again_statements = statements.taken()
    step = max(4, entries // 100)
    grown_lines = claude_code_transcript(entries + step)
    t0 = time.perf_counter()
    grown = await reimport("".join(grown_lines))
    extended = time.perf_counter() - t0
    extended_statements = statements.taken()
    # The first extension in this Neo4j plans transcript_extend; the second finds the plan.
    t0 = time.perf_counter()
    again_grown = await reimport("".join(claude_code_transcript(entries + 2 * step)))
    extended_again = time.perf_counter() - t0
    extended_again_statements = statements.taken()
    b.add(S13, "re-import, unchanged", None, None, value=round(unchanged * 1000, 1),
          unit="ms", note=f"writes {again.written} nodes: the file's size and sha256 match "
                          f"the session's, so it is not parsed ({unchanged_statements}, "
                          "its first run in this Neo4j)")
    b.add(S13, "re-import, unchanged again", None, None,
          value=round(unchanged_again * 1000, 1), unit="ms",
          note=f"{unchanged_again_statements}, its plan cached")
    b.add(S13, f"re-import, grown by {step} entries", None, None,
          value=round(extended * 1000, 1), unit="ms",
          note=f"writes {grown.written} nodes (transcript_extend, with their events); the "
               "whole file parsed (no reading kept of it yet: its first import was not "
               "importTranscript's), stored nodes compared by digest, its reading kept; the "
               "statement's first run in this Neo4j, so its planning included "
               f"({extended_statements}; the rest parsing the file)")
    b.add(S13, f"re-import, grown by {step} entries again", None, None,
          value=round(extended_again * 1000, 1), unit="ms",
          note=f"writes {again_grown.written} nodes; "
               + ("parsed whole (a file below KEPT_FROM_BYTES keeps no reading)"
                  if "transcript_stored" in extended_again_statements else
                  "read on from the reading kept at the growth before (the lines gained "
                  "parsed, no transcript_stored)")
               + f"; transcript_extend's plan cached ({extended_again_statements})")
    statements.stop()
    readings.cleanup()
    b.log(f"13: {entries:,} entries imported at {entries / imported:,.0f}/s, "
          f"{store_bytes / messages:,.0f} store B/message")


class _Statements:
    """The time each statement a Database runs takes (its round trips included)."""

    def __init__(self) -> None:
        self.times: list[tuple[str, float]] = []
        self.stop: Any = None  # puts the Database's own execution back

    def taken(self) -> str:
        """Those since the last call, as 'name 1.23 s, …'."""
        shown = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in self.times)
        self.times.clear()
        return shown


def _statement_times(db: Any) -> _Statements:
    statements = _Statements()
    execute = db._execute

    async def timed(query, bound, routing, check):
        t0 = time.perf_counter()
        try:
            return await execute(query, bound, routing, check)
        finally:
            statements.times.append((query.name, time.perf_counter() - t0))

    db._execute = timed
    statements.stop = lambda: setattr(db, "_execute", execute)
    return statements


FOLLOW_APPENDS = 6  # user prompts appended, one at a time, to each followed file


async def follow_latency(b: Bench) -> None:
    """`--follow`'s latency: from a line appended to a followed Claude Code file until its
    node is in the ledger, for a short session and one of `transcript_entries` records
    (each first imported by the follower, then grown by one user prompt at a time,
    FOLLOW_APPENDS times: the row is the median of the appends after the first, whose
    statements may be planned; the first is in the note)."""
    import asyncio
    import statistics
    import tempfile
    from pathlib import Path

    from service.transcripts.follow import follow

    ledger = b.ledger
    for entries in (20, b.sizes.transcript_entries):
        lines = claude_code_transcript(entries + FOLLOW_APPENDS)
        folder = Path(tempfile.mkdtemp(prefix="bench-follow-"))
        file = folder / f"{SESSION}-follow-{entries}.jsonl"
        file.write_text("".join(lines[:entries]))
        stop, seen = asyncio.Event(), []
        task = asyncio.create_task(follow(ledger, str(file), None, stop, seen.append,
                                          interval=0.1, settle=3600))
        while not seen:
            await asyncio.sleep(0.05)
        latencies = []
        for k in range(FOLLOW_APPENDS):
            record = {**json.loads(lines[entries + k]), "type": "user",
                      "message": {"role": "user", "content": f"and the next thing ({k})"}}
            t0 = time.perf_counter()
            with file.open("a") as f:
                f.write(json.dumps(record) + "\n")
            while len(seen) == k + 1:
                await asyncio.sleep(0.01)
            latencies.append(time.perf_counter() - t0)
            await asyncio.sleep(0.2)
        stop.set()
        await task
        b.add(S13, f"follow latency, {entries:,}-entry session", None, None,
              value=round(statistics.median(latencies[1:]) * 1000), unit="ms",
              note=f"a user prompt appended until its node is written (poll 0.1 s): median of "
                   f"{FOLLOW_APPENDS - 1} appends (each "
                   f"{', '.join(f'{x * 1000:.0f}' for x in latencies[1:])} ms) after the "
                   f"first ({latencies[0] * 1000:.0f} ms); the lines gained parsed, the "
                   "turns they change mapped, stored from what the last import stored")


async def grown_reimports(b: Bench) -> None:
    """`ctxdag import-transcript FILE` of a file of `transcript_entries` records grown by 1%
    at a time, GROWTHS times: the file last written to two days before its first import
    (which so keeps nothing), the first growth parses the file whole and keeps its reading
    (service/transcripts/kept.py), the next ones read on from the kept reading. The row is
    the median of the growths after the second (the first plans transcript_known)."""
    import io
    import os
    import statistics
    import tempfile
    from pathlib import Path

    from service.transcripts.batch import import_paths
    from service.transcripts.kept import Shelf

    from .transcript_folder import _read_text

    ledger, entries = b.ledger, b.sizes.transcript_entries
    step = max(4, entries // 100)
    with tempfile.TemporaryDirectory(prefix="bench-grown-") as folder:
        shelf = Shelf(Path(folder) / "readings", "bench", ledger.tenant, ledger.limits)
        file = Path(folder) / f"{SESSION}-grown-{b.tenant}.jsonl"
        times, said = [], io.StringIO()
        for k in range(GROWTHS + 1):
            file.write_text("".join(claude_code_transcript(entries + k * step)))
            if k == 0:
                then = time.time() - 2 * 86_400
                os.utime(file, (then, then))
            t0 = time.perf_counter()
            status = await import_paths(ledger, [str(file)], None, False, None, _read_text,
                                        said, said, shelf=shelf)
            times.append(time.perf_counter() - t0)
            assert status == 0, said.getvalue()
        readings = Path(folder) / "readings"  # none for a file below KEPT_FROM_BYTES
        kept = sum(p.stat().st_size for p in readings.iterdir()) if readings.exists() else 0
        size = file.stat().st_size
    b.add(S13, f"import-transcript of a grown file ({step} entries gained), whole", None, None,
          value=round(times[1] * 1000), unit="ms",
          note=f"the first growth seen: parsed whole, its reading kept (first import "
               f"{times[0]:.2f} s)")
    b.add(S13, f"import-transcript of a grown file ({step} entries gained), read on", None,
          None, value=round(statistics.median(times[3:]) * 1000), unit="ms",
          note=f"from the kept reading: median of {GROWTHS - 2} growths "
               f"({', '.join(f'{x * 1000:.0f}' for x in times[3:])} ms) after "
               f"{times[2] * 1000:.0f} ms; the reading kept is {kept / 1e6:.1f} MB for a "
               f"{size / 1e6:.1f} MB file")


GROWTHS = 6
