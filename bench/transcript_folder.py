"""Workload 13, the folder: a first import of a generated folder of sessions in the three
formats, as `ctxdag import-transcript DIR` makes it (service/transcripts/batch.py), then
the same folder again, unchanged.

Most of its bytes are tool-heavy Claude Code sessions (bench/transcripts.py's records, of
1,000 to 3,000 entries each, every fourth with a compaction); around them, copies of the
test suite's own small Claude Code (with sub-agents), Pi and Codex files under new
session ids, so every format's reader and a folder of many small sessions are exercised.
The files' modification times are spread over the last 30 days (AGE_DAYS), the newest
last, as on a machine whose tools have been in use for a month: a file written to in the
last day has its reading kept by its first import (service/transcripts/kept.py), as
`ctxdag import-transcript` does with its cache folder. Measured: entries per second of the
first import, of the same folder imported one file at a time (the walk's pipeline off:
each file read, checked and written before the next is read) into another tenant in the
same run, and of a third first import into a third tenant once Neo4j has warmed up; the
peak resident memory of a fourth, `ctxdag import-transcript DIR` in a process of its own
(ru_maxrss, which never falls, so it bounds what the import held); the unchanged
re-import's time; and the peak memory of `ctxdag import-transcript` importing single files
of four sizes (the largest beyond what one Neo4j transaction holds),
each in a process of its own, once as just written, once as last written days ago, and
once more when it gained entries days after that import (its reading not kept).
"""
from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from service.store import Ledger, Limits
from service.transcripts import batch
from service.transcripts.batch import import_paths
from service.transcripts.kept import Shelf

from .core import Bench
from .transcripts import claude_code_transcript

S13 = "13 transcript import (Claude Code)"
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "transcripts"
# Each copied fixture's own session id, replaced by a fresh one per copy.
IDS = {"pi/tree.jsonl": "7d3f0c2a-pi", "pi/labels.jsonl": "5e1a-labels",
       "pi/v1.jsonl": "0a1b-legacy",
       "codex/rollout-2026-02-21T14-00-00-019c8b22-compact.jsonl": "019c8b22-compact",
       "codex/rollout-2025-09-14T08-00-00-0199a1b2-codex.jsonl": "0199a1b2-codex"}
AGE_DAYS = 30
GROWN_BY = 200  # entries a single file gains after its import, for its growth's peak


def generate_folder(root: Path, megabytes: float) -> int:
    """Writes sessions under `root` until they hold `megabytes`; their entries (lines)."""
    budget, written, entries, n = int(megabytes * 1e6), 0, 0, 0
    while written < budget:
        if n % 5 == 4:
            lines = _copies(root, n)
        else:
            size = 1_000 + 500 * (n % 5)
            lines = claude_code_transcript(size)
            if n % 4 == 0:
                lines = _compacted(lines)
            (root / f"cc-{n:04d}.jsonl").write_text("".join(lines))
        written += sum(len(line.encode()) for line in lines)
        entries += len(lines)
        n += 1
    _aged(root)
    return entries


def _aged(root: Path) -> None:
    """The files' modification times spread over the last AGE_DAYS, in the order written."""
    files = sorted(root.rglob("*.jsonl"), key=lambda file: file.stat().st_mtime_ns)
    now = time.time()
    for index, file in enumerate(files):
        then = now - AGE_DAYS * 86_400 * (len(files) - 1 - index) / max(len(files) - 1, 1)
        os.utime(file, (then, then))


def _compacted(lines: list[str]) -> list[str]:
    """The session with a compaction halfway: its boundary and summary, as Claude Code
    writes them, continuing the chain."""
    half = len(lines) // 2
    before = json.loads(lines[half - 1])
    boundary = {**before, "type": "system", "subtype": "compact_boundary", "uuid": "cb-half",
                "parentUuid": None, "logicalParentUuid": before["uuid"],
                "content": "Conversation compacted", "compactMetadata": {"trigger": "auto"}}
    boundary.pop("message", None)
    summary = {**before, "type": "user", "uuid": "cs-half", "parentUuid": "cb-half",
               "isCompactSummary": True,
               "message": {"role": "user", "content": "This session is being continued. "
                           "Summary: the modules were read and the bug located."}}
    after = json.loads(lines[half])
    after["parentUuid"] = "cs-half"
    return (lines[:half] + [json.dumps(boundary) + "\n", json.dumps(summary) + "\n",
                            json.dumps(after) + "\n"] + lines[half + 1:])


def _copies(root: Path, n: int) -> list[str]:
    """One copy of each small fixture (and the sub-agent session with its side files)."""
    lines: list[str] = []
    for name, own_id in IDS.items():
        text = (FIXTURES / name).read_text()
        if own_id:
            text = text.replace(own_id, f"{own_id}-{n:04d}")
        target = root / Path(name).parent / f"{n:04d}-{Path(name).name}"
        if own_id and name.startswith("codex/"):
            target = target.with_name(Path(name).name.replace(own_id, f"{own_id}-{n:04d}"))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        lines += text.splitlines(keepends=True)
    agents = FIXTURES / "claude_code" / "agents"
    stem = "5c1d9e20-agents"
    copy = root / "agents" / f"{n:04d}"
    copy.mkdir(parents=True)
    shutil.copy(agents / f"{stem}.jsonl", copy / f"{stem}-{n:04d}.jsonl")
    shutil.copytree(agents / stem, copy / f"{stem}-{n:04d}")
    for file in [copy / f"{stem}-{n:04d}.jsonl", *(copy / f"{stem}-{n:04d}").rglob("*.jsonl")]:
        lines += file.read_text().splitlines(keepends=True)
    return lines


async def folder_import(b: Bench) -> None:
    megabytes = b.sizes.transcript_folder_mb
    ledger = b.ledger
    with tempfile.TemporaryDirectory(prefix="ctxdag-bench-13-") as folder, \
            tempfile.TemporaryDirectory(prefix="ctxdag-bench-13-cache-") as cache:
        shelf = Shelf(Path(cache), b.neo.uri, ledger.tenant, ledger.limits)
        entries = generate_folder(Path(folder), megabytes)
        files = sum(1 for _ in Path(folder).rglob("*.jsonl"))
        t0 = time.perf_counter()
        status = await import_paths(ledger, [folder], None, False, None, _read_text,
                                    out=io.StringIO(), err=io.StringIO(), shelf=shelf)
        first = time.perf_counter() - t0
        kept = [path.stat().st_size for path in Path(cache).glob("*.reading")]
        t0 = time.perf_counter()
        await import_paths(ledger, [folder], None, False, None, _read_text,
                           out=io.StringIO(), err=io.StringIO(), shelf=shelf)
        unchanged = time.perf_counter() - t0
        one_at_a_time = await _without_pipeline(b, folder)
        warm = await _into_another_tenant(b, folder)
        with tempfile.TemporaryDirectory(prefix="ctxdag-bench-13-cache-") as its_cache:
            peak, _ = await asyncio.to_thread(_peak_of_import, b, Path(folder), its_cache,
                                              "-folder")
    b.add(S13, f"first import of a folder, {megabytes:g} MB", None, None,
          value=round(entries / first), unit="entries/s",
          note=f"{entries:,} entries in {files:,} files, {first:.1f} s (exit status {status}); "
               f"{len(kept)} readings kept ({sum(kept) / 1e6:.1f} MB): the files of 256 KiB "
               "or more written to in the last day")
    b.add(S13, f"the same folder one file at a time, {megabytes:g} MB", None, None,
          value=round(entries / one_at_a_time), unit="entries/s",
          note=f"{one_at_a_time:.1f} s; the pipeline is {one_at_a_time / first:.2f}× as fast")
    b.add(S13, f"the same folder, Neo4j warmed by the two imports before, {megabytes:g} MB",
          None, None, value=round(entries / warm), unit="entries/s",
          note=f"{warm:.1f} s, into a third tenant, the pipeline on; a JVM's first minutes "
               "of heavy work compile Neo4j's own code on the same two cores")
    b.add(S13, f"peak memory, folder of {megabytes:g} MB", None, None,
          value=round(peak), unit="MB",
          note="`ctxdag import-transcript DIR` in a process of its own, a fourth first import "
               "into a tenant of its own")
    b.add(S13, f"re-import of the unchanged folder, {megabytes:g} MB", None, None,
          value=round(unchanged, 2), unit="s", note=f"{files:,} files recognised unparsed")
    b.log(f"13: folder of {megabytes:g} MB: {entries / first:,.0f} entries/s, "
          f"peak RSS {peak:.0f} MB, unchanged {unchanged:.2f} s")


async def _without_pipeline(b: Bench, folder: str) -> float:
    """Seconds to import the folder into a tenant of its own with each file read, checked
    and written before the next one is read: the walk's stages one after the other."""
    ledger = Ledger.open(b.db, f"{b.tenant}-serial", Limits())
    cache = tempfile.TemporaryDirectory(prefix="ctxdag-bench-13-cache-")
    shelf = Shelf(Path(cache.name), b.neo.uri, ledger.tenant, ledger.limits)
    lock, real_ready, real_store = asyncio.Lock(), batch.ready, batch.store_transcript

    async def ready(*args, **kwargs):
        async with lock:
            return await real_ready(*args, **kwargs)

    async def store(*args, **kwargs):
        async with lock:
            return await real_store(*args, **kwargs)

    batch.ready, batch.store_transcript = ready, store
    try:
        t0 = time.perf_counter()
        await import_paths(ledger, [folder], None, False, None, _read_text,
                           out=io.StringIO(), err=io.StringIO(), shelf=shelf)
        return time.perf_counter() - t0
    finally:
        batch.ready, batch.store_transcript = real_ready, real_store
        cache.cleanup()


async def _into_another_tenant(b: Bench, folder: str) -> float:
    """Seconds of the folder's first import into a tenant of its own, as the first one."""
    ledger = Ledger.open(b.db, f"{b.tenant}-warm", Limits())
    with tempfile.TemporaryDirectory(prefix="ctxdag-bench-13-cache-") as cache:
        shelf = Shelf(Path(cache), b.neo.uri, ledger.tenant, ledger.limits)
        t0 = time.perf_counter()
        await import_paths(ledger, [folder], None, False, None, _read_text,
                           out=io.StringIO(), err=io.StringIO(), shelf=shelf)
        return time.perf_counter() - t0


async def memory_by_file_size(b: Bench) -> None:
    """Peak RSS and entries/s of `ctxdag import-transcript FILE` for one Claude Code file at
    each size, each in a process of its own (so one size's peak does not hide another's):
    written just now, then as if last written days ago, each into a tenant of its own; then
    the second's growth, GROWN_BY entries gained days after its import."""
    sizes = (b.sizes.transcript_entries // 2, b.sizes.transcript_entries * 2,
             b.sizes.transcript_entries * 4,
             # 140 MB at the default size: more than one transaction of the bench's Neo4j
             # (2 GB heap) holds, so only an import committed a part at a time stores it.
             b.sizes.transcript_entries * 16)
    peaks = []
    with tempfile.TemporaryDirectory(prefix="ctxdag-bench-13-") as folder:
        for entries in sizes:
            file = Path(folder) / f"memory-{entries}-{uuid.uuid4().hex[:6]}.jsonl"
            lines = claude_code_transcript(entries + GROWN_BY)
            file.write_text("".join(lines[:entries]))
            # Written just now, the file's reading is kept for its next growth (kept.py);
            # one its tool last wrote days ago (most of a machine's history) keeps none.
            for recent in (True, False):
                if not recent:
                    days_ago = time.time() - 3 * 86400
                    os.utime(file, (days_ago, days_ago))
                peak, seconds = await asyncio.to_thread(_peak_of_import, b, file, folder,
                                                        f"-{'recent' if recent else 'old'}")
                peaks.append((recent, entries, peak))
                b.add(S13, f"peak memory, one file of {entries:,} entries"
                      + ("" if recent else ", last written 3 days ago"), None, None,
                      value=round(peak), unit="MB",
                      note=f"{file.stat().st_size / 1e6:.1f} MB file, "
                           f"{entries / seconds:,.0f} entries/s, `ctxdag import-transcript "
                           "FILE` in a process of its own"
                           + ("" if recent else "; its reading not kept"))
            # Its tool went on with it days later: the import stores what it gained.
            with file.open("a", encoding="utf-8") as f:
                f.write("".join(lines[entries:]))
            os.utime(file, (days_ago, days_ago))
            peak, seconds = await asyncio.to_thread(_peak_of_import, b, file, folder, "-old")
            peaks.append(("grown", entries, peak))
            b.add(S13, f"peak memory, one file of {entries:,} entries grown by {GROWN_BY} "
                  "since its import", None, None, value=round(peak), unit="MB",
                  note=f"{seconds:.1f} s, `ctxdag import-transcript FILE` in a process of its "
                       "own; no reading kept")
    b.log("13: peak memory by file size: " + ", ".join(
        f"{entries:,} entries {_kind(recent)} {peak:.0f} MB" for recent, entries, peak in peaks))


def _kind(recent: bool | str) -> str:
    return recent if isinstance(recent, str) else "recent" if recent else "old"


_MEASURE = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
            "sys.exit(done.returncode)")


def _peak_of_import(b: Bench, file: Path, cache: str, tenant: str) -> tuple[float, float]:
    """The child's peak RSS in MB, and its seconds (the file, or folder, new in the tenant
    named by `tenant`: a file's reading kept, in `cache`, if its tool wrote to it lately)."""
    ctxdag = str(Path(sys.executable).parent / "ctxdag")
    env = {**os.environ, "NEO4J_URI": b.neo.uri, "CTXDAG_TENANT": f"{b.tenant}-memory{tenant}",
           "CTXDAG_CACHE": cache}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _MEASURE, ctxdag, "import-transcript",
                           str(file)], env=env, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t0
    return int(done.stdout.strip().splitlines()[-1]) / 1024, seconds


def _read_text(file: str) -> str:
    return Path(file).read_text(encoding="utf-8")

