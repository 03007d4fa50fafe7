"""A large transcript's first import, read a part at a time and written in parts within one
transaction (service/transcripts/streamed.py, service/store/transcript_parts.py), stores
the session that reading the file whole and importing it at once stores: every node,
edge, seq and property the same, for every format and shape this suite has (compactions,
sub-agents, labels, tools, media, degraded entries). A part that fails leaves nothing
behind; the file's next import knows it unchanged, or reads on from its kept reading."""
import asyncio
import base64
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

from service.errors import Conflict, NotFound
from service.model.validate import Limits
from service.store.backup import export_session
from service.search.find import search
from service.store.ledger import Ledger
from service.store import pending_imports, records, transcript_growth, transcript_parts
from service.store.transcript_growth import grow_in_parts
from service.transcripts import (Beside, batch, detect, document, kept, reading, reading_of,
                                 source_fingerprint, streamed)
from service.transcripts import claude_code, jsonl
from service.transcripts import model
from service.transcripts.model import Mode
from service.transcripts.walk import transcript_files
from tests.integration.helpers import assert_sound, run_cypher
from tests.integration.test_follow_growth import (claude_code_lines, same_as_imported_whole,
                                                   statements)
from tests.transcript_trees import FIXTURES, SESSIONS, tool_homes
from tests.unit.test_blocks import png


def _read_text(file: str) -> str:
    return Path(file).read_text(encoding="utf-8")


@pytest.fixture
def in_parts(monkeypatch):
    """Every file read a part at a time, every turn set aside on disk
    (unless its reading is kept), and written three nodes a part."""
    monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", 0)
    monkeypatch.setattr(reading, "LIVE_TURNS", 0)
    monkeypatch.setattr(transcript_parts, "PART_NODES", 3)


async def the_one_session_is_the_file_imported_whole(db, events, ledger: Ledger, path: Path,
                                                     monkeypatch) -> None:
    """The ledger holds one session, sound and the one `path` imported at once makes."""
    (session,) = (await ledger.sessions.list(first=10)).items
    await assert_sound(ledger, session.id)
    monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", 1 << 40)  # the reference: at once
    await same_as_imported_whole(db, events, ledger, session.id, path.read_text(), str(path))


def published(monkeypatch) -> list[str]:
    """The sessions imports in parts publish from now on (their last statement run)."""
    found = []
    write = transcript_parts.Database.write

    async def counted(self, name, /, check=None, **params):
        if name == "transcript_import_session":
            found.append(params["session"]["properties"]["id"])
        return await write(self, name, check, **params)

    monkeypatch.setattr(transcript_parts.Database, "write", counted)
    return found


def fresh(db, events, name: str) -> Ledger:
    return Ledger.open(db, f"test-parts-{name}-{uuid.uuid4().hex[:8]}", Limits(),
                       events.committed)


async def imported(ledger: Ledger, paths: list[str], shelf=None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = await batch.import_paths(ledger, paths, None, False, None, _read_text, out=out,
                                      err=err, shelf=shelf)
    return status, out.getvalue(), err.getvalue()


async def normalized(ledger: Ledger) -> dict[str, str]:
    """Each session's export, by its source file, with every id the tenant names it by
    replaced by its node's seq (and the session's by SESSION), and without what hashes
    them."""
    found = {}
    for session in (await ledger.sessions.list(first=100)).items:
        document = await export_session(ledger.db, ledger.tenant, session.id, ledger.limits)
        names = {session.id: "SESSION"}
        names.update({row["properties"]["id"]: f"NODE{row['properties']['seq']}"
                      for row in document["nodes"]})
        document.pop("exported_at")
        for row in document["nodes"]:  # a hash of the row, its ids the tenant's: present
            assert row["properties"].pop("source_digest")
        text = json.dumps(document, sort_keys=True)
        for old, new in sorted(names.items(), key=lambda item: -len(item[0])):
            text = text.replace(old, new)
        text = text.replace(ledger.tenant, "TENANT")
        renamed = json.loads(text)
        for key in ("labels", "branch_names", "pins", "media"):  # in the order of their ids
            renamed[key] = sorted(renamed[key], key=lambda item: json.dumps(item, sort_keys=True))
        text = json.dumps(renamed, sort_keys=True)
        source = json.loads(document["session"]["properties"]["source"])
        found[source["file"].split("/tool-homes/")[1]] = text
    return found


async def test_every_fixture_imported_in_parts_is_the_session_imported_at_once(
        db, events, tmp_path, monkeypatch):
    homes = [str(path) for path in tool_homes(tmp_path / "tool-homes").values()]
    whole = fresh(db, events, "whole")
    status, out, err = await imported(whole, homes)
    assert status == 0, err
    expected = await normalized(whole)

    ran = published(monkeypatch)
    monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", 0)
    monkeypatch.setattr(reading, "LIVE_TURNS", 0)
    monkeypatch.setattr(transcript_parts, "PART_NODES", 3)
    parts = fresh(db, events, "parts")
    status, out_parts, err_parts = await imported(parts, homes)
    assert status == 0, err_parts
    assert len(ran) == len(expected)  # every session was imported in parts
    assert out_parts.splitlines()[-1] == out.splitlines()[-1]
    got = await normalized(parts)
    assert got.keys() == expected.keys()
    for file in expected:
        got_nodes = json.loads(got[file])["nodes"]
        expected_nodes = json.loads(expected[file])["nodes"]
        for a, b in zip(got_nodes, expected_nodes):
            assert a["properties"].keys() == b["properties"].keys(), file
            for key in a["properties"]:
                assert a["properties"][key] == b["properties"][key], (file, key)
            assert a == b, file
        assert json.loads(got[file]) == json.loads(expected[file]), file
    for session in (await parts.sessions.list(first=100)).items:
        await assert_sound(parts, session.id)
    # Each is recognised unchanged without parsing it, as a file read whole is.
    ran.clear()
    status, out, err = await imported(parts, homes)
    assert status == 0 and out.splitlines()[-1].startswith(
        f"{len(expected)} files: 0 new, 0 grown, {len(expected)} unchanged"), out
    assert ran == []


async def test_a_part_that_fails_leaves_nothing_behind(db, events, tmp_path, in_parts,
                                                       monkeypatch):
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(claude_code_lines(200)))
    ledger = fresh(db, events, "fails")
    written = []
    rows = streamed.Streamed.rows

    def failing(self, start, stop):
        if start >= 30:  # after some parts were written in the transaction
            raise Conflict("a part that cannot be written")
        written.append(start)
        return rows(self, start, stop)

    monkeypatch.setattr(streamed.Streamed, "rows", failing)
    status, out, err = await imported(ledger, [str(path)])
    assert status == 1 and "a part that cannot be written" in err
    assert len(written) >= 5
    assert await ledger.sessions.count() == 0
    assert await left(db, ledger.tenant) == NOTHING
    monkeypatch.setattr(streamed.Streamed, "rows", rows)
    status, out, err = await imported(ledger, [str(path)])
    assert status == 0 and "imported as session" in out, err
    (session,) = (await ledger.sessions.list(first=10)).items
    await assert_sound(ledger, session.id)


def pasted_images(count: int, size: int) -> str:
    """A Claude Code session of `count` prompts, each pasting an image of its own (`size`
    bytes), and their replies."""
    lines, parent = [], None
    for i in range(count):
        image = base64.b64encode(png(64, 48) + bytes([i]) * size).decode()
        for kind, content in (("user", [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": image}},
                {"type": "text", "text": f"what does screenshot {i} show?"}]),
                ("assistant", [{"type": "text", "text": f"A dialog ({i})."}])):
            uuid = f"{kind[0]}{i:04d}"
            message = {"role": kind, "content": content}
            if kind == "assistant":
                message.update(id=f"msg_{i:04d}", model="claude-sonnet-4-5", type="message")
            lines.append(json.dumps({
                "type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "images",
                "timestamp": f"2025-08-01T10:00:{len(lines):02d}Z", "isSidechain": False,
                "cwd": "/work/app", "message": message}) + "\n")
            parent = uuid
    return "".join(lines)


async def test_a_part_holds_few_nodes_when_they_carry_heavy_media(
        db, events, ledger, tmp_path, monkeypatch):
    path = tmp_path / "images.jsonl"
    path.write_text(pasted_images(12, 600))
    monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", 0)
    monkeypatch.setattr(transcript_parts, "PART_BYTES", 10_000)
    parts = []
    write = transcript_parts.Database.write

    async def counted(self, name, /, check=None, **params):
        if name == "transcript_import_part":
            parts.append((len(params["nodes"]),
                          sum(len(medium["data"]) for medium in params["media"])))
        return await write(self, name, check, **params)

    monkeypatch.setattr(transcript_parts.Database, "write", counted)
    status, out, err = await imported(ledger, [str(path)])
    assert status == 0, err
    # 25 nodes: ROOT, then a prompt (an image of 844 base64 characters) and its reply
    # each. Rows are built 8 at a time (four images, about 5,000 bytes with the rows'
    # text) until a part passes 10,000 bytes: two builds a part, where 1,000 nodes would
    # have made one.
    image = len(base64.b64encode(png(64, 48) + bytes(600)))
    assert parts == [(16, 8 * image), (9, 4 * image)], parts
    # Grown by a screenshot more: its rows are compared with the stored ones in such parts.
    built = []
    rows = streamed.Streamed.rows

    def recorded(self, start, stop):
        built.append((start, stop))
        return rows(self, start, stop)

    monkeypatch.setattr(streamed.Streamed, "rows", recorded)
    path.write_text(pasted_images(13, 600))
    status, out, err = await imported(ledger, [str(path)])
    assert status == 0 and "gained 2 nodes" in out, out + err
    assert built == [(0, 8), (8, 16), (16, 24), (24, 27)], built
    monkeypatch.setattr(streamed.Streamed, "rows", rows)
    await the_one_session_is_the_file_imported_whole(db, events, ledger, path, monkeypatch)


async def test_a_fault_of_the_importer_midway_leaves_nothing_and_the_walk_goes_on(
        db, events, tmp_path, in_parts, monkeypatch):
    faulty, other = tmp_path / "a-faulty.jsonl", tmp_path / "b-other.jsonl"
    faulty.write_text("".join(claude_code_lines(200)))
    other.write_text("".join(claude_code_lines(40)))
    ledger = fresh(db, events, "faults")
    rows = streamed.Streamed.rows

    def failing(self, start, stop):
        if self.plan.transcript.file == str(faulty) and start >= 30:  # parts were written
            raise IndexError("a fault of the importer's")
        return rows(self, start, stop)

    monkeypatch.setattr(streamed.Streamed, "rows", failing)
    status, out, err = await imported(ledger, [str(tmp_path)])
    assert status == 1
    assert err.startswith(f"error: INTERNAL: {faulty}: the importer failed on this file "
                          "(IndexError: a fault of the importer's, at test_import_in_parts.py:")
    assert f"{other}: imported as session" in out
    assert out.splitlines()[-1] == "2 files: 1 new, 0 grown, 0 unchanged, 1 failed"
    (session,) = (await ledger.sessions.list(first=10)).items
    assert session.id == model.session_id(ledger.tenant, "claude-code", "b-other")
    await assert_sound(ledger, session.id)
    faulty_id = model.session_id(ledger.tenant, "claude-code", "a-faulty")
    for kind in ("Node", "ToolUse", "PendingImport"):
        counted = "MATCH (x:%s {session_id: $id}) RETURN count(x) AS n" % kind
        (row,) = await run_cypher(db, counted, id=faulty_id)
        assert row["n"] == 0, kind
        (row,) = await run_cypher(db, counted, id=session.id)  # what the count would see
        assert row["n"] > 0 or kind == "PendingImport", kind


async def test_a_recent_file_imported_in_parts_keeps_its_reading_and_reads_on(
        db, events, tmp_path, in_parts, monkeypatch):
    monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)
    lines = claude_code_lines(400)
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(lines[:300]))
    ledger = fresh(db, events, "kept")
    shelf = kept.Shelf(tmp_path / "cache", "store", ledger.tenant, ledger.limits)
    status, out, err = await imported(ledger, [str(path)], shelf)
    assert status == 0 and "imported as session" in out, err
    assert shelf.holds(str(path), False)
    # Its turns were set aside as it was read: kept beside the reading, read from there.
    assert len(list(shelf.folder.glob("*.aside"))) == 1
    loaded = shelf.load(str(path), False)
    assert any(turn.aside is not None for turn in loaded.reading.transcript(Mode()).turns)
    path.write_text("".join(lines))
    fed = []
    feed = batch.Reading.feed
    monkeypatch.setattr(batch.Reading, "feed",
                        lambda self, text: fed.append(text.count("\n")) or feed(self, text))
    grown, grow = [], batch.grow_in_parts
    monkeypatch.setattr(batch, "grow_in_parts",
                        lambda *args, **kw: grown.append(args[2]) or grow(*args, **kw))
    parsed = batch._parsed
    monkeypatch.setattr(batch, "_parsed", None)  # never read whole
    status, out, err = await imported(ledger, [str(path)], shelf)
    assert status == 0 and "gained" in out, err
    assert fed == [100]  # the lines gained, read on from the kept reading
    monkeypatch.setattr(batch, "_parsed", parsed)
    # Stored a part at a time as a growth, and kept again, read on to the file's end.
    assert len(grown) == 1 and grown[0].reading is not None
    assert shelf.load(str(path), False).read_to == path.stat().st_size
    await the_one_session_is_the_file_imported_whole(db, events, ledger, path, monkeypatch)
    # Its tool rewrote its first lines since: the reading is of no use, and the file is
    # refused, read whole, as no longer what the session was imported from.
    monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", 0)
    path.write_text("".join(lines).replace("Now step", "Now stage", 1) + lines[0])
    status, out, err = await imported(ledger, [str(path)], shelf)
    assert status == 1 and "no longer begins with" in err, (out, err)
    assert not shelf.holds(str(path), False)


async def test_a_large_file_killed_mid_import_leaves_nothing_and_imports_whole_next(
        neo4j_server, db, tmp_path):
    """Killed at any point of its import in parts (at several points of the time a clean
    import takes), the file's session is all there or not there at all."""
    path = tmp_path / "large-session.jsonl"
    path.write_text("".join(claude_code_lines(10_000)))
    assert streamed.streams(str(path))
    tenant = f"test-parts-kill-{uuid.uuid4().hex[:8]}"

    def command(tenant: str) -> subprocess.Popen:
        env = {**os.environ, "NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
               "NEO4J_PASSWORD": neo4j_server.password, "CTXDAG_TENANT": tenant,
               "CTXDAG_CACHE": str(tmp_path / "cache")}
        return subprocess.Popen([sys.executable, "-m", "service.cli", "import-transcript",
                                 str(path)], env=env, text=True, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)

    started = time.monotonic()
    clean = command(f"{tenant}-clean")
    out, err = clean.communicate(timeout=300)
    took = time.monotonic() - started
    assert clean.returncode == 0 and "imported as session" in out, err
    whole = await tenant_nodes(db, f"{tenant}-clean")
    for fraction in (0.35, 0.6, 0.85):
        killed = command(tenant)
        time.sleep(took * fraction)
        killed.send_signal(signal.SIGKILL)
        killed.communicate(timeout=60)
        assert await session_nodes(db, tenant) in (0, whole)
    again = command(tenant)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert await tenant_nodes(db, tenant) == await session_nodes(db, tenant) == whole
    assert (await left(db, tenant))["PendingImport"] == 0


NOTHING = {"Session": 0, "Node": 0, "ToolUse": 0, "Media": 0, "PendingImport": 0}


async def left(db, tenant: str) -> dict[str, int]:
    """What the tenant holds of each kind an import in parts writes."""
    found = {}
    for kind in NOTHING:
        (row,) = await run_cypher(db, f"MATCH (x:{kind} {{tenant: $tenant}}) RETURN count(x) AS n",
                                  tenant=tenant)
        found[kind] = row["n"]
    return found


async def test_every_fixture_stopped_before_its_publication_leaves_nothing(
        db, events, tmp_path, in_parts, monkeypatch):
    """Every part written, media among them, and the session never created: the import
    clears all it wrote, each medium it stored too."""
    homes = [str(path) for path in tool_homes(tmp_path / "tool-homes").values()]
    write = transcript_parts.Database.write
    parts = []

    async def stopped(self, name, /, check=None, **params):
        if name == "transcript_import_session":
            raise Conflict("stopped before its publication")
        if name == "transcript_import_part":
            parts.append(len(params["media"]))
        return await write(self, name, check, **params)

    monkeypatch.setattr(transcript_parts.Database, "write", stopped)
    ledger = fresh(db, events, "stopped")
    status, out, err = await imported(ledger, homes)
    assert status == 1 and err.count("stopped before its publication") == SESSIONS, err
    assert len(parts) > SESSIONS and sum(parts) > 0  # media were written, then cleared
    assert await left(db, ledger.tenant) == NOTHING
    assert await ledger.sessions.count() == 0


async def test_an_import_stopped_midway_is_cleared_by_the_next_of_its_session(
        db, events, tmp_path, in_parts, monkeypatch):
    """A kill leaves parts written and the claim: none of it is in the ledger, and the
    session's next import clears it and imports the session whole."""
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(claude_code_lines(200)))
    ledger = fresh(db, events, "killed")
    await killed_after_parts(ledger, path, 5, monkeypatch)
    held = await left(db, ledger.tenant)
    assert held["Node"] >= 15 and held["PendingImport"] == 1 and held["Session"] == 0
    assert (await search(ledger, "Reading")).hits == ()  # in no session: nothing finds them
    pending = await orphan_ids(db, ledger.tenant)
    assert await ledger.nodes.get_many(pending) == []  # nor a read by id
    assert await ledger.nodes.children_many(pending) == {id: [] for id in pending}
    with pytest.raises(NotFound):
        await ledger.nodes.get(pending[0])

    status, out, err = await imported(ledger, [str(path)])
    assert status == 0 and "imported as session" in out, err
    assert "cleared" not in out  # not abandoned yet: its own import took it over
    assert await orphans(db, ledger.tenant) == 0
    await the_one_session_is_the_file_imported_whole(db, events, ledger, path, monkeypatch)


async def test_an_import_stopped_midway_is_cleared_by_an_import_of_its_session_at_once(
        db, events, tmp_path, in_parts, monkeypatch):
    """A kill leaves parts written; the same session then arrives whole (its file cut below
    the size read in parts, or as a text posted): its nodes' ids are those the parts took,
    so the import clears what the stopped one left and imports the session once more."""
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(claude_code_lines(200)))
    ledger = fresh(db, events, "then-whole")
    await killed_after_parts(ledger, path, 5, monkeypatch)
    assert await orphans(db, ledger.tenant) >= 15
    monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", 1 << 40)  # read whole, one transaction
    ran = published(monkeypatch)
    status, out, err = await imported(ledger, [str(path)])
    assert status == 0 and "imported as session" in out, err
    assert ran == []  # not in parts
    assert await orphans(db, ledger.tenant) == 0
    assert (await left(db, ledger.tenant))["PendingImport"] == 0
    await the_one_session_is_the_file_imported_whole(db, events, ledger, path, monkeypatch)


async def test_what_an_abandoned_import_left_is_cleared_by_the_next_run(
        db, events, tmp_path, in_parts, monkeypatch):
    """The file of a killed import is gone: the next import of other files clears what it
    left once no part has touched it for ABANDONED_AFTER, and says so."""
    gone, other = tmp_path / "gone.jsonl", tmp_path / "other.jsonl"
    gone.write_text("".join(claude_code_lines(200)))
    other.write_text("".join(claude_code_lines(20, session="other-session")))
    ledger = fresh(db, events, "abandoned")
    await killed_after_parts(ledger, gone, 5, monkeypatch)
    gone.unlink()
    status, out, err = await imported(ledger, [str(other)])
    assert status == 0 and "cleared" not in out, err  # touched a moment ago: not abandoned
    assert (await left(db, ledger.tenant))["PendingImport"] == 1
    assert await orphans(db, ledger.tenant) > 0
    monkeypatch.setattr(pending_imports, "ABANDONED_AFTER", timedelta(0))
    status, out, err = await imported(ledger, [str(other)])
    assert status == 0 and out.splitlines()[0] == (
        "cleared what 1 import(s) stopped midway by an earlier run left written"), out
    assert await orphans(db, ledger.tenant) == 0
    assert (await left(db, ledger.tenant))["PendingImport"] == 0
    assert await ledger.sessions.count() == 1


async def test_an_import_taken_over_by_another_of_its_session_writes_nothing_more(
        db, events, tmp_path, in_parts, monkeypatch):
    """Two importers of one file: the one started last takes the claim over and clears
    the other's parts; the other's next part finds the claim gone, writes nothing, and
    clears nothing of the one that took over."""
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(claude_code_lines(200)))
    ledger, second = fresh(db, events, "twice"), []
    write = transcript_parts.Database.write
    parts = []

    async def racing(self, name, /, check=None, **params):
        if name == "transcript_import_part":
            parts.append(params["token"])
            if len(parts) == 5:  # the first importer is midway: the second one starts
                monkeypatch.setattr(transcript_parts.Database, "write", write)
                second.append(await imported(ledger, [str(path)]))
        return await write(self, name, check, **params)

    monkeypatch.setattr(transcript_parts.Database, "write", racing)
    status, out, err = await imported(ledger, [str(path)])
    assert status == 1 and "took it over" in err, (out, err)
    ((status_second, out_second, err_second),) = second
    assert status_second == 0 and "imported as session" in out_second, err_second
    assert await orphans(db, ledger.tenant) == 0
    assert (await left(db, ledger.tenant))["PendingImport"] == 0
    await the_one_session_is_the_file_imported_whole(db, events, ledger, path, monkeypatch)


async def killed_after_parts(ledger: Ledger, path: Path, parts: int, monkeypatch) -> None:
    """Imports `path` and stops it as a kill would after `parts` parts: nothing of the
    import's own clearing runs."""
    write = transcript_parts.Database.write
    written = []

    async def killed(self, name, /, check=None, **params):
        if name == "transcript_import_part":
            if len(written) == parts:
                raise asyncio.CancelledError  # as a kill: no except clause of the import runs
            written.append(name)
        return await write(self, name, check, **params)

    monkeypatch.setattr(transcript_parts.Database, "write", killed)
    with pytest.raises(asyncio.CancelledError):
        await imported(ledger, [str(path)])
    monkeypatch.setattr(transcript_parts.Database, "write", write)


async def orphans(db, tenant: str) -> int:
    """The tenant's nodes and tool uses of no session: what an unfinished import wrote."""
    (row,) = await run_cypher(db, (
        "MATCH (x {tenant: $tenant}) WHERE (x:Node OR x:ToolUse) "
        "AND NOT EXISTS { MATCH (:Session {id: x.session_id}) } RETURN count(x) AS n"),
        tenant=tenant)
    return row["n"]


async def orphan_ids(db, tenant: str) -> list[str]:
    """The ids of the tenant's nodes of no session."""
    rows = await run_cypher(db, (
        "MATCH (x:Node {tenant: $tenant}) WHERE NOT EXISTS { MATCH (:Session {id: x.session_id}) } "
        "RETURN x.id AS id ORDER BY x.seq"), tenant=tenant)
    return [row["id"] for row in rows]


async def session_nodes(db, tenant: str) -> int:
    """The nodes of the tenant's sessions: what the ledger holds."""
    (row,) = await run_cypher(db, "MATCH (s:Session {tenant: $tenant}) "
                              "MATCH (x:Node {session_id: s.id}) RETURN count(x) AS n",
                              tenant=tenant)
    return row["n"]


async def tenant_nodes(db, tenant: str) -> int:
    (row,) = await run_cypher(db, "MATCH (x:Node {tenant: $tenant}) RETURN count(x) AS n",
                              tenant=tenant)
    return row["n"]


async def test_a_large_file_grown_since_its_import_is_read_a_part_at_a_time_once(
        db, events, tmp_path, in_parts, monkeypatch):
    lines = claude_code_lines(400)
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(lines[:300]))
    ledger = fresh(db, events, "grown")
    status, out, err = await imported(ledger, [str(path)])  # no shelf: nothing kept
    assert status == 0 and "imported as session" in out, err
    path.write_text("".join(lines))
    monkeypatch.setattr(streamed, "_READ_BYTES", 1 << 12)
    read, fed, built = [], [], []
    planned = streamed.read
    monkeypatch.setattr(streamed, "read", lambda *args, **kw: read.append(kw.get("prefix"))
                        or planned(*args, **kw))
    feed = batch.Reading.feed
    monkeypatch.setattr(batch.Reading, "feed",
                        lambda self, text: fed.append(text.count("\n")) or feed(self, text))
    rows = document.Plan.rows
    monkeypatch.setattr(document.Plan, "rows", lambda self, start, stop, mode: built.append(
        (self.size, min(stop, self.size) - start)) or rows(self, start, stop, mode))
    noted, compared = [], transcript_growth._compared

    def counted(*args):
        found = compared(*args)
        noted.append(len(records._made) + len(records._made_objects))
        return found

    monkeypatch.setattr(transcript_growth, "_compared", counted)
    records.forget_checked_blocks()
    ran = statements(monkeypatch, db)
    status, out, err = await imported(ledger, [str(path)])
    assert status == 0 and "gained" in out, err
    # Read once, a part at a time, hashing the bytes the session was imported from.
    assert read == [len("".join(lines[:300]).encode())]
    assert sum(fed) == 400 and len(fed) > 1
    # Its rows built three at a time, and once more only those the extension looks at.
    (nodes,) = {size for size, _ in built}
    gained = int(out.split(" gained ")[1].split()[0])
    assert max(n for _, n in built) <= 3 and sum(n for _, n in built) <= nodes + 2 * gained
    assert 0 < gained < 110
    # What building the rows noted for a check is kept only of those it checks.
    assert 0 < noted[0] <= 2 * gained, (noted, gained)
    names = [name for name, _ in ran]
    assert names.count("transcript_stored") == 1 and "transcript_extend" in names
    await the_one_session_is_the_file_imported_whole(db, events, ledger, path, monkeypatch)


@pytest.mark.parametrize("keeps", [False, True], ids=["no reading kept", "reading kept"])
async def test_every_fixture_grown_in_parts_is_the_session_grown_whole(
        db, events, tmp_path, monkeypatch, keeps):
    """Each fixture file cut short, imported, then grown to its whole: the growth found a
    part at a time stores what the growth of the file read whole stores, wherever the cut
    falls (a compaction, a tool call and its result, a sub-agent's run apart); read on
    from the reading its import kept, or read again."""
    monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)
    homes = tool_homes(tmp_path / "tool-homes")
    paths = [str(path) for path in homes.values()]
    files = [file for file in transcript_files(paths, None).files if "subagents" not in file
             and not Path(file).name.startswith("agent-")]
    whole_text = {file: Path(file).read_text() for file in files}
    grown = []
    grow = batch.grow_in_parts

    async def counted(*args, **kw):
        grown.append(args[2].session_id)
        assert (args[2].reading is not None) == keeps  # read on from it, or set aside
        return await grow(*args, **kw)

    monkeypatch.setattr(batch, "grow_in_parts", counted)
    read_on, reads_on = [], streamed.read_on
    monkeypatch.setattr(streamed, "read_on",
                        lambda *args: read_on.append(args[1]) or reads_on(*args))
    for fraction in (1 / 3, 2 / 3):
        for file, text in whole_text.items():
            lines = text.splitlines(keepends=True)
            Path(file).write_text("".join(lines[:max(1, round(len(lines) * fraction))]))
        whole, parts = fresh(db, events, "grown-whole"), fresh(db, events, "grown-parts")
        shelves = {ledger.tenant: kept.Shelf(tmp_path / f"cache-{ledger.tenant}", "store",
                                             ledger.tenant, ledger.limits) if keeps else None
                   for ledger in (whole, parts)}
        for ledger, threshold in ((whole, 1 << 40), (parts, 0)):
            monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", threshold)
            monkeypatch.setattr(reading, "LIVE_TURNS", 0)
            monkeypatch.setattr(transcript_parts, "PART_NODES", 3)
            status, out, err = await imported(ledger, paths, shelves[ledger.tenant])
            assert "failed" not in out, err
        for file, text in whole_text.items():
            Path(file).write_text(text)
        outs = []
        for ledger, threshold in ((whole, 1 << 40), (parts, 0)):
            monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", threshold)
            grown.clear()
            read_on.clear()
            status, out, err = await imported(ledger, paths, shelves[ledger.tenant])
            assert status == 0, err
            outs.append(re.sub(r"ses_[0-9a-f]+", "SESSION", out))  # ids name the tenant
        assert outs[1] == outs[0]
        assert len(grown) == int(outs[0].splitlines()[-1].split(" new, ")[1].split(" grown")[0])
        assert len(grown) >= 10, outs[0]
        assert len(read_on) == (len(grown) if keeps else 0)
        expected, got = await normalized(whole), await normalized(parts)
        assert got.keys() == expected.keys()
        for file in expected:
            a, b = json.loads(got[file]), json.loads(expected[file])
            for node in a["nodes"] + b["nodes"]:  # when it was tombstoned: now
                if node["properties"].get("deleted_at"):
                    node["properties"]["deleted_at"] = "WHEN"
            for session in (a["session"], b["session"]):  # when it was grown: now
                session["properties"]["updated_at"] = "WHEN"
            for x, y in zip(a["nodes"], b["nodes"]):
                assert x == y, (fraction, file, _differing(x["properties"], y["properties"]))
            assert a == b, (fraction, file, _differing(a["session"]["properties"],
                                                       b["session"]["properties"]))
        for session in (await parts.sessions.list(first=100)).items:
            await assert_sound(parts, session.id)


def _differing(got: dict, expected: dict) -> dict:
    return {key: (got.get(key), expected.get(key)) for key in got.keys() | expected.keys()
            if got.get(key) != expected.get(key)}


async def test_a_growth_whose_session_is_gone_since_it_was_read_imports_it_anew(
        db, events, tmp_path, in_parts, monkeypatch):
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(claude_code_lines(120)))
    ledger = fresh(db, events, "gone")
    planned = streamed.read(str(path), claude_code.TOOL, ledger.tenant, ledger.limits, Mode(),
                            _read_text, spill=True, keep=False, prefix=1_000)
    planned.grows = True
    stored, _ = await grow_in_parts(ledger.db, ledger.tenant, planned, ledger.limits,
                                    ledger.events)
    assert stored.created and stored.nodes == planned.size
    await the_one_session_is_the_file_imported_whole(db, events, ledger, path, monkeypatch)


async def test_a_large_file_rewritten_since_its_import_is_refused_writing_nothing(
        db, events, tmp_path, in_parts):
    lines = claude_code_lines(200)
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(lines[:150]))
    ledger = fresh(db, events, "rewritten")
    status, out, err = await imported(ledger, [str(path)])
    assert status == 0 and "imported as session" in out, err
    sid = out.split("session ")[1].split()[0]
    before = await session_nodes(db, ledger.tenant)
    for changed, said in (("".join(lines).replace("Now step", "Now stage", 1),
                           "no longer begins with"),
                          ("".join(lines[:100]) + lines[150], "is shorter than")):
        path.write_text(changed)
        status, out, err = await imported(ledger, [str(path)])
        assert status != 0 and said in err and sid in err, (out, err)
        assert await session_nodes(db, ledger.tenant) == before


async def test_a_large_file_moved_since_its_import_is_listed_where_it_is(
        db, events, tmp_path, in_parts):
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(claude_code_lines(200)))
    ledger = fresh(db, events, "moved")
    status, out, err = await imported(ledger, [str(path)])
    sid = out.split("session ")[1].split()[0]
    before = await session_nodes(db, ledger.tenant)
    moved = tmp_path / "renamed-project" / path.name  # the same session, elsewhere
    moved.parent.mkdir()
    path.rename(moved)
    status, out, err = await imported(ledger, [str(moved)])
    assert status == 0, err
    assert out.splitlines()[0] == (f"{moved}: session {sid} gained no nodes; its title or "
                                   "source changed")
    assert (await ledger.sessions.get(sid)).source_file == str(moved)
    assert await session_nodes(db, ledger.tenant) == before
    status, out, err = await imported(ledger, [str(moved)])
    assert out.splitlines()[-1] == "1 file: 0 new, 0 grown, 1 unchanged"


async def test_a_large_text_given_whole_is_imported_in_parts_and_its_reading_kept(
        db, events, tmp_path, in_parts, monkeypatch):
    """importTranscript's path: the text is in the request, its rows are built in parts."""
    monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)
    lines, name = claude_code_lines(400), "long-session.jsonl"
    ledger = fresh(db, events, "given")
    shelf = kept.Shelf(tmp_path / "cache", "store", ledger.tenant, ledger.limits, freeze=False)
    ran = published(monkeypatch)
    stored = await batch.import_text(ledger, "".join(lines[:300]), name, None, shelf=shelf)
    assert stored.created and ran == [stored.session_id]
    assert shelf.holds(name, False)
    fed = []
    feed = batch.Reading.feed
    monkeypatch.setattr(batch.Reading, "feed",
                        lambda self, text: fed.append(text.count("\n")) or feed(self, text))
    stored = await batch.import_text(ledger, "".join(lines), name, None, shelf=shelf)
    assert stored.changed and fed == [100]  # read on from the reading kept
    again = await batch.import_text(ledger, "".join(lines), name, None, shelf=shelf)
    assert not again.changed
    await assert_sound(ledger, stored.session_id)
    monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", 1 << 40)  # the reference: at once
    await same_as_imported_whole(db, events, ledger, stored.session_id, "".join(lines), name)


def test_the_session_key_told_by_a_files_first_lines_is_the_one_its_read_names():
    for file in sorted(Path(FIXTURES).rglob("*.jsonl")):
        tool = detect(file.read_text(), str(file))
        transcript = read_transcript(file.read_text(), str(file), tool, "t", Limits())
        key = streamed.session_key_of(str(file), tool)
        assert key == transcript.session_key, file


def read_transcript(text, file, tool, tenant, limits):
    return reading_of(text, file, tool, tenant, limits).transcript(Mode())


def test_a_text_given_whole_is_planned_as_the_file_read_a_part_at_a_time(tmp_path,
                                                                         monkeypatch):
    monkeypatch.setattr(streamed, "_READ_BYTES", 1000)  # many parts, cut mid-line
    monkeypatch.setattr(jsonl, "PART_CHARACTERS", 1000)
    text = "".join(claude_code_lines(300)) + '{"type": "user", "uuid": "x", "mess'
    path = tmp_path / "long-session.jsonl"
    path.write_text(text)
    assert list(jsonl.text_parts(text))[-1].endswith("mess") and \
        all(part.endswith("\n") for part in list(jsonl.text_parts(text))[:-1])
    assert "".join(jsonl.text_parts(text)) == text
    read, given = (streamed.read(str(path), "claude-code", "t", Limits(), Mode(), _read_text),
                   streamed.read_given(text, str(path), None, "t", Limits(), Mode()))
    assert (given.imported, given.read_as, given.complete) == \
        (read.imported, read.read_as, read.complete)
    assert not read.complete and read.imported["bytes"] == len(text.rsplit("\n", 1)[0]) + 1
    assert given.read_as == streamed.given_read_as(text, str(path), None, False)[1] == \
        source_fingerprint(text, str(path), "claude-code", Beside([]))
    assert given.header() == read.header()
    assert given.rows(0, given.size) == read.rows(0, read.size)


def test_files_under_the_threshold_are_read_whole(tmp_path):
    small = tmp_path / "small.jsonl"
    small.write_text("{}\n")
    assert not streamed.streams(str(small))
    assert not streamed.streams("-")
    assert transcript_files([str(tmp_path)], None).files == [str(small)]
