"""A one-shot `ctxdag import-transcript` of a file it saw grow keeps its reading
(service/transcripts/kept.py), so the file's next import parses only the lines it gained
and stores them without reading back which of the session's nodes are stored; a reading
that does not fit the file or the session is passed over, and the import is what reading
the file whole makes of it. Counted, never timed; each session is compared with the whole
file imported at once."""
import os
import time

import pytest

from service.transcripts import batch, kept
from service.transcripts.reading import Reading
from tests.integration.helpers import assert_sound, run_command, runtime_for
from tests.integration.test_follow_growth import (claude_code_lines, same_as_imported_whole,
                                                  statements)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The cache folder of the commands run here; every grown file's reading kept, however
    small."""
    monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)
    return tmp_path / "cache"


async def run(ledger, cache, capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    runtime = runtime_for(ledger.db, ledger.tenant, CTXDAG_CACHE=str(cache))
    status = await run_command(runtime, "import-transcript", *argv)
    said = capsys.readouterr()
    return status, said.out, said.err


def readings(cache) -> list:
    shelf = cache / "readings"
    return sorted(shelf.iterdir()) if shelf.exists() else []


def fed(monkeypatch) -> tuple[list[int], list[str]]:
    """The lines each Reading.feed is given from now on, and the files read whole."""
    lines, whole = [], []
    feed, read_whole = Reading.feed, batch.reading_of

    def counted(self, text):
        lines.append(text.count("\n"))
        return feed(self, text)

    def counted_whole(text, file, *args):
        whole.append(file)
        return read_whole(text, file, *args)

    monkeypatch.setattr(Reading, "feed", counted)
    monkeypatch.setattr(batch, "reading_of", counted_whole)
    return lines, whole


def written_long_ago(path) -> None:
    """The file's tool last wrote to it two days ago."""
    then = time.time() - 2 * kept.RECENT_SECONDS
    os.utime(path, (then, then))


async def grown_twice(ledger, cache, capsys, path, lines) -> str:
    """The file imported at 300 lines, then grown to 400 (its reading kept): the session."""
    path.write_text("".join(lines[:300]))
    written_long_ago(path)
    status, out, err = await run(ledger, cache, capsys, str(path))
    assert status == 0 and "imported as session" in out, err
    assert readings(cache) == []  # an old file seen once keeps nothing
    path.write_text("".join(lines[:400]))
    status, out, err = await run(ledger, cache, capsys, str(path))
    assert status == 0 and "gained" in out, err
    assert len(readings(cache)) == 1
    return out.split("session ")[1].split()[0]


async def read_on(db, events, ledger, cache, capsys, monkeypatch, path, lines, sid, ends):
    """The file grown to each of `ends` lines (60 more each time) and imported: each import
    parses the lines gained alone and stores them from what the last one stored; the session
    is then sound and what the whole file imported at once makes."""
    for end in ends:
        path.write_text("".join(lines[:end]))
        gained, whole = fed(monkeypatch)
        ran = statements(monkeypatch, ledger.db)
        status, out, err = await run(ledger, cache, capsys, str(path))
        assert status == 0 and f"session {sid} gained" in out, err
        assert (gained, whole) == ([60], [])  # the lines it gained, not the file
        names = [name for name, _ in ran]
        assert "transcript_known" in names and "transcript_stored" not in names
        monkeypatch.undo()
        monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)
    await assert_sound(ledger, sid)
    await same_as_imported_whole(db, events, ledger, sid, path.read_text(), str(path))


async def test_a_file_seen_to_grow_is_read_on_at_its_next_import(
        db, events, ledger, cache, capsys, tmp_path, monkeypatch):
    lines = claude_code_lines(520)
    path = tmp_path / "long-session.jsonl"
    sid = await grown_twice(ledger, cache, capsys, path, lines)
    await read_on(db, events, ledger, cache, capsys, monkeypatch, path, lines, sid, (460, 520))
    # Unchanged since: recognised by its fingerprint, as without a reading kept.
    status, out, _ = await run(ledger, cache, capsys, str(path))
    assert status == 0 and "holds it already" in out


async def test_a_file_written_to_today_is_read_on_from_its_first_import(
        db, events, ledger, cache, capsys, tmp_path, monkeypatch):
    lines = claude_code_lines(420)
    path = tmp_path / "live-session.jsonl"
    path.write_text("".join(lines[:300]))
    status, out, err = await run(ledger, cache, capsys, str(path))
    assert status == 0 and "imported as session" in out, err
    sid = out.split("session ")[1].split()[0]
    assert len(readings(cache)) == 1  # its tool is likely still writing to it
    await read_on(db, events, ledger, cache, capsys, monkeypatch, path, lines, sid, (360, 420))


async def test_a_reading_that_does_not_fit_the_file_or_the_session_is_passed_over(
        db, events, ledger, cache, capsys, tmp_path, monkeypatch):
    from service.transcripts.batch import import_text
    lines = claude_code_lines(700)
    path = tmp_path / "long-session.jsonl"
    sid = await grown_twice(ledger, cache, capsys, path, lines)
    (reading,) = readings(cache)
    # Unreadable, or writable by others: the file is read whole.
    for spoil in (lambda: reading.write_bytes(b"not a reading"),
                  lambda: reading.chmod(0o666)):
        saved = reading.read_bytes()
        spoil()
        path.write_text("".join(lines[:len(path.read_text().splitlines()) + 50]))
        _, whole = fed(monkeypatch)
        status, out, err = await run(ledger, cache, capsys, str(path))
        assert status == 0 and "gained" in out and whole == [str(path)], err
        monkeypatch.undo()
        monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)
        assert reading.read_bytes() != saved and not reading.stat().st_mode & 0o022  # kept anew
    # Someone else went on with the session: read back whole, stored right.
    await import_text(ledger, "".join(lines[:560]), str(path), None)
    path.write_text("".join(lines[:600]))
    ran = statements(monkeypatch, ledger.db)
    status, out, err = await run(ledger, cache, capsys, str(path))
    assert status == 0 and "gained" in out, err
    names = [name for name, _ in ran]
    assert names.index("transcript_known") < names.index("transcript_stored")
    monkeypatch.undo()
    monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)
    await assert_sound(ledger, sid)
    await same_as_imported_whole(db, events, ledger, sid, path.read_text(), str(path))
    # Rewritten by its tool where it was read: refused as ever, nothing written.
    before = await ledger.sessions.get(sid)
    path.write_text("".join(lines[:598]) + lines[599] + lines[598] + "".join(lines[600:700]))
    status, _, err = await run(ledger, cache, capsys, str(path))
    assert status == 1 and "CONFLICT" in err and "no longer begins with" in err
    assert await ledger.sessions.get(sid) == before


async def test_a_small_file_keeps_nothing(ledger, capsys, tmp_path):
    lines = claude_code_lines(200)
    path = tmp_path / "long-session.jsonl"
    cache = tmp_path / "cache"
    for end in (100, 150, 200):  # a file below KEPT_FROM_BYTES: parsed whole each time
        path.write_text("".join(lines[:end]))
        status, _, err = await run(ledger, cache, capsys, str(path))
        assert status == 0, err
        assert readings(cache) == []
    assert os.path.getsize(path) < kept.KEPT_FROM_BYTES


async def test_a_session_with_sub_agents_is_read_on_from_its_first_import(
        db, ledger, cache, capsys, tmp_path, monkeypatch):
    """Its sub-agents' files, read with it, are kept in its reading: a growth of the session
    file feeds only the lines it gained, and the session ends as the whole folder imported
    at once makes it."""
    import shutil
    import uuid
    from pathlib import Path

    from service.store import Ledger, Limits
    from tests.integration.test_transcript_growth import _dump

    agents = Path(__file__).parent.parent / "fixtures" / "transcripts" / "claude_code" / "agents"
    stem = "5c1d9e20-agents"
    shutil.copytree(agents / stem, tmp_path / stem)
    path = tmp_path / f"{stem}.jsonl"
    lines = (agents / f"{stem}.jsonl").read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:3]))  # the calls spawning the sub-agents, no results yet
    status, out, err = await run(ledger, cache, capsys, str(path))
    assert status == 0 and "imported as session" in out, err
    sid = out.split("session ")[1].split()[0]
    assert len(readings(cache)) == 1
    for end in (5, 6):
        path.write_text("".join(lines[:end]))
        gained, whole = fed(monkeypatch)
        ran = statements(monkeypatch, ledger.db)
        status, out, err = await run(ledger, cache, capsys, str(path))
        assert status == 0 and f"session {sid} gained" in out, err
        assert whole == [] and sum(gained) == (2 if end == 5 else 1), gained
        assert "transcript_stored" not in [name for name, _ in ran]
        monkeypatch.undo()
        monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)
    await assert_sound(ledger, sid)
    other = Ledger.open(db, f"{ledger.tenant}-whole-{uuid.uuid4().hex[:6]}", Limits(), None)
    written_long_ago(path)
    status, out, err = await run(other, tmp_path / "other-cache", capsys, str(path))
    assert status == 0 and "imported as session" in out, err
    assert await _dump(ledger, sid) == await _dump(other, out.split("session ")[1].split()[0])
