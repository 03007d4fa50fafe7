"""A grown transcript file imports as if it had been imported whole (docs/guides/importing-sessions.md):
for every fixture file and every line it could have been cut at,
importing the cut file and then the whole one leaves the session exactly as importing
the whole one does — its nodes and edges, branches, HEAD, summaries, labels and the tool
set versions of the tools it names — on the real Neo4j.

Each import goes through the store API (transcripts.batch.import_text, as importTranscript
does, without side files) in a tenant of its own; the sessions are compared as a
canonical dump in which every id is replaced by the source entries it was named by.
"""
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from service.store import Ledger, Limits
from service.store.backup import export_session
from service.transcripts.batch import import_text
from service.transcripts.model import NoTurns

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
FILES = sorted(FIXTURES.rglob("*.jsonl"))
# What differs by when a node was written, not by what the session holds: a node's
# display order and the session's counters and clock.
WRITE_ORDER = {"seq", "next_seq", "updated_at", "meta_version", "summary_version"}
# A node's mapping digest: a hash of what the dump compares, over ids that differ by tenant.
HASHED = {"source_digest"}


async def _imported(db, events, run: str, text: str, file: str) -> tuple[Ledger, str]:
    ledger = Ledger.open(db, f"test-grow-{run}-{uuid.uuid4().hex[:8]}", Limits(),
                         events.committed)
    stored = await import_text(ledger, text, file, None)
    return ledger, stored.session_id


async def _dump(ledger: Ledger, session_id: str) -> dict[str, Any]:
    document = await export_session(ledger.db, ledger.tenant, session_id, ledger.limits)
    live = [n for n in document["nodes"] if n["properties"].get("deleted_at") is None]
    names = {session_id: "SESSION"}
    for node in live:
        props = node["properties"]
        meta = json.loads(props["metadata"])
        source = ("synthetic:" if meta.get("synthetic") else "") + "+".join(
            meta.get("source", {}).get("entries", [])) or "ROOT"
        names[props["id"]] = f"{props['role']}:{source}"
    for node in live:
        if json.loads(node["properties"]["metadata"]).get("synthetic"):
            names[node["properties"]["id"]] = "synthetic after " + names[node["predecessor_id"]]
    branches = await ledger.branches.list(session_id)
    dump = {
        "session": {**document["session"], "properties": {
            k: v for k, v in document["session"]["properties"].items() if k not in WRITE_ORDER | HASHED}},
        "nodes": sorted(({**n, "properties": {k: v for k, v in n["properties"].items()
                                              if k not in WRITE_ORDER | HASHED}} for n in live),
                        key=lambda n: names[n["properties"]["id"]]),
        "labels": sorted(document["labels"], key=lambda label: names[label["node_id"]]),
        "media": document["media"],
        "tool_sets": document.get("tool_sets", []),
        "tool_set_versions": document.get("tool_set_versions", []),
        "branches": sorted((names[b.tip.id], b.length, b.is_head, b.holds_head,
                            b.summary_id and names[b.summary_id]) for b in branches),
    }
    return _renamed(dump, names)


def _renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        if value in names:
            return names[value]
        for old, new in names.items():  # ids inside JSON text (blocks, metadata)
            if old in value:
                value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    return value


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
async def test_importing_a_cut_file_then_the_whole_equals_importing_it_whole(
        db, events, path):
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    run = uuid.uuid4().hex[:8]
    whole = await _dump(*await _imported(db, events, run, text, path.name))
    checked = 0
    for cut in range(1, len(lines)):
        try:
            ledger, session_id = await _imported(db, events, run, "".join(lines[:cut]),
                                                 path.name)
        except NoTurns:
            continue  # nothing to import before this line
        grown = await import_text(ledger, text, path.name, None)
        assert grown.session_id == session_id
        assert await ledger.violations(session_id) == [], f"cut after line {cut}"
        dump = await _dump(ledger, session_id)
        for part in whole:
            assert dump[part] == whole[part], f"{part}, cut after line {cut}: {dump[part]} != {whole[part]}"
        checked += 1
    assert checked or len(lines) == 1
