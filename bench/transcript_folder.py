"""Workload 13, the folder: a first import of a generated folder of sessions in the three
formats, as `ctxdag import-transcript DIR` makes it (service/transcripts/batch.py), then
the same folder again, unchanged.

Most of its bytes are tool-heavy Claude Code sessions (bench/transcripts.py's records, of
1,000 to 3,000 entries each, every fourth with a compaction); around them, copies of the
test suite's own small Claude Code (with sub-agents), Pi and Codex files under new
session ids, so every format's reader and a folder of many small sessions are exercised.
Measured: entries per second of the first import, the process's peak resident memory
(ru_maxrss, which never falls, so it bounds what the import held), and the unchanged
re-import's time.
"""
from __future__ import annotations

import io
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

from service.transcripts.batch import import_paths

from .core import Bench
from .transcripts import claude_code_transcript

S13 = "13 transcript import (Claude Code)"
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "transcripts"
# Each copied fixture's own session id, replaced by a fresh one per copy.
IDS = {"pi/tree.jsonl": "7d3f0c2a-pi", "pi/labels.jsonl": "5e1a-labels",
       "pi/v1.jsonl": "0a1b-legacy",
       "codex/rollout-2026-02-21T14-00-00-019c8b22-compact.jsonl": "019c8b22-compact",
       "codex/rollout-2025-09-14T08-00-00-0199a1b2-codex.jsonl": "0199a1b2-codex"}


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
    return entries


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
    with tempfile.TemporaryDirectory(prefix="ctxdag-bench-13-") as folder:
        entries = generate_folder(Path(folder), megabytes)
        files = sum(1 for _ in Path(folder).rglob("*.jsonl"))
        rss_before = _peak_rss_mb()
        t0 = time.perf_counter()
        status = await import_paths(ledger, [folder], None, False, None, _read_text,
                                    out=io.StringIO(), err=io.StringIO())
        first = time.perf_counter() - t0
        rss_after = _peak_rss_mb()
        t0 = time.perf_counter()
        await import_paths(ledger, [folder], None, False, None, _read_text,
                           out=io.StringIO(), err=io.StringIO())
        unchanged = time.perf_counter() - t0
    b.add(S13, f"first import of a folder, {megabytes:g} MB", None, None,
          value=round(entries / first), unit="entries/s",
          note=f"{entries:,} entries in {files:,} files, {first:.1f} s (exit status {status})")
    b.add(S13, f"peak memory, folder of {megabytes:g} MB", None, None,
          value=round(rss_after), unit="MB",
          note=f"the process's peak RSS: {rss_before:.0f} MB before the folder's import")
    b.add(S13, f"re-import of the unchanged folder, {megabytes:g} MB", None, None,
          value=round(unchanged, 2), unit="s", note=f"{files:,} files recognised unparsed")
    b.log(f"13: folder of {megabytes:g} MB: {entries / first:,.0f} entries/s, "
          f"peak RSS {rss_after:.0f} MB, unchanged {unchanged:.2f} s")


def _read_text(file: str) -> str:
    return Path(file).read_text(encoding="utf-8")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
