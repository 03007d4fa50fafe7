"""What following a long file costs at each growth (service/transcripts/follow.py): the
follower parses only the lines the file gained, maps only the turns they change, and
stores them from what its last import stored, without reading back which of the
session's nodes are stored; a session someone else went on with meanwhile is read back
whole, and a file rewritten where the follower last read is refused. Counted, never
timed; each session is compared with the whole file imported at once."""
import json
import os

import pytest

from service.errors import Conflict
from service.transcripts.follow import Follower
from tests.integration.helpers import assert_sound
from tests.integration.test_transcript_growth import _dump, _imported

SETTLE = 3600.0  # never quiet: what may still grow is held back


def claude_code_lines(count: int, session: str = "long-session") -> list[str]:
    """`count` Claude Code records of one chain: prompts, responses calling a tool (one
    record per block of one message), results."""
    lines: list[str] = []
    parent = None

    def record(kind: str, content, message_id: str | None = None) -> None:
        nonlocal parent
        uuid = f"e{len(lines):06d}"
        message = {"role": kind, "content": content}
        if message_id:
            message.update(id=message_id, model="claude-sonnet-4-5", type="message")
        lines.append(json.dumps({
            "type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": session,
            "timestamp": f"2025-08-01T10:{len(lines) // 60 % 60:02d}:{len(lines) % 60:02d}Z",
            "isSidechain": False, "cwd": "/work/app", "version": "2.1.80",
            "message": message}) + "\n")
        parent = uuid

    record("user", "Start.")
    i = 0
    while len(lines) < count:
        mid, use = f"msg_{i:05d}", f"toolu_{i:05d}"
        if i % 4 == 3:
            record("assistant", [{"type": "text", "text": f"Done with step {i}."}], mid)
            record("user", f"Now step {i + 1}.")
        else:
            record("assistant", [{"type": "text", "text": f"Reading {i}."}], mid)
            record("assistant", [{"type": "tool_use", "id": use, "name": "read_file",
                                  "input": {"path": f"src/m{i}.py"}}], mid)
            record("user", [{"type": "tool_result", "tool_use_id": use,
                             "content": f"contents of m{i}.py " * 20}])
        i += 1
    return lines[:count]


def statements(monkeypatch, db) -> list[tuple[str, dict]]:
    """The statements `db` runs from now on, with their parameters."""
    ran: list[tuple[str, dict]] = []
    for method in ("read", "read_on_leader", "write"):
        original = getattr(db, method)

        async def recorded(name, /, *args, _original=original, **params):
            ran.append((name, params))
            return await _original(name, *args, **params)

        monkeypatch.setattr(db, method, recorded)
    return ran


async def same_as_imported_whole(db, events, ledger, sid, text, file):
    whole_ledger, whole_sid = await _imported(db, events, "whole", text, file)
    followed, whole = await _dump(ledger, sid), await _dump(whole_ledger, whole_sid)
    for dump in (followed, whole):  # the text a one-shot import read whole: no follower's
        for key in ("source_bytes", "source_prefix_sha256"):
            dump["session"]["properties"].pop(key, None)
    assert followed == whole


async def test_a_growth_of_a_long_followed_file_parses_and_stores_only_what_it_gained(
        db, events, ledger, tmp_path, monkeypatch):
    lines = claude_code_lines(1_200)
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(lines[:1_000]))
    follower = Follower(ledger, str(path), None, False)
    first = await follower.poll(SETTLE)
    assert first is not None and first.created
    reading = follower.reading
    for line in lines[1_000:1_003]:  # a prompt, then a response calling a tool
        parsed, built = reading.parsed, reading.memo.built
        ran = statements(monkeypatch, db)
        with path.open("a") as f:
            f.write(line)
        stored = await follower.poll(SETTLE)
        assert follower.reading is reading  # read on, not again
        assert reading.parsed - parsed == 1  # the line it gained, not the file
        written = stored.written if stored is not None else 0
        assert reading.memo.built - built == written  # only the turns it stored were mapped
        names = [name for name, _ in ran]
        assert "transcript_stored" not in names  # no id of the session sent back and forth
        if written:
            assert names == ["transcript_known", "transcript_extend"]
            known = ran[0][1]
            assert len(known["new_ids"]) == written and known["check_ids"] == []
            assert len(ran[1][1]["nodes"]) == written
        monkeypatch.undo()
    # Up to the next prompt: nothing held back, so the session is the whole file's.
    end = next(i for i in range(1_003, len(lines))
               if isinstance(json.loads(lines[i])["message"]["content"], str)) + 1
    with path.open("a") as f:
        f.write("".join(lines[1_003:end]))
    await follower.poll(SETTLE)
    assert follower.reading is reading
    await assert_sound(ledger, first.session_id)
    await same_as_imported_whole(db, events, ledger, first.session_id,
                                 "".join(lines[:end]), str(path))


async def test_a_session_someone_else_went_on_with_is_read_back_whole(
        db, events, ledger, tmp_path, monkeypatch):
    from service.transcripts.batch import import_text
    lines = claude_code_lines(300)
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(lines[:200]))
    follower = Follower(ledger, str(path), None, False)
    first = await follower.poll(SETTLE)
    # Another importer (a one-shot import of the same file) stores more of it meanwhile.
    await import_text(ledger, "".join(lines[:250]), str(path), None)
    ran = statements(monkeypatch, db)
    with path.open("a") as f:
        f.write("".join(lines[200:300]))
    stored = await follower.poll(SETTLE)
    assert stored is not None and stored.written > 0
    names = [name for name, _ in ran]
    assert names[:2] == ["transcript_known", "transcript_stored"]  # read back whole
    monkeypatch.undo()
    # From there on it knows the session again.
    ran = statements(monkeypatch, db)
    with path.open("a") as f:
        f.write(json.dumps({**json.loads(lines[-1]), "uuid": "later", "type": "user",
                            "parentUuid": json.loads(lines[-1])["uuid"],
                            "message": {"role": "user", "content": "And then?"}}) + "\n")
    await follower.poll(SETTLE)
    assert "transcript_stored" not in [name for name, _ in ran]
    monkeypatch.undo()
    await assert_sound(ledger, first.session_id)
    await same_as_imported_whole(db, events, ledger, first.session_id, path.read_text(),
                                 str(path))


async def test_a_followed_file_rewritten_where_it_was_read_is_refused(ledger, tmp_path):
    lines = claude_code_lines(60)
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(lines[:50]))
    follower = Follower(ledger, str(path), None, False)
    first = await follower.poll(SETTLE)
    before = (await ledger.sessions.get(first.session_id)).node_count
    # The tool rewrites its last two lines (swapped) and goes on: read again whole, refused.
    path.write_text("".join(lines[:48]) + lines[49] + lines[48] + "".join(lines[50:]))
    with pytest.raises(Conflict) as refused:
        await follower.poll(SETTLE)
    assert "no longer begins with" in refused.value.message
    assert (await ledger.sessions.get(first.session_id)).node_count == before


async def test_a_folders_follower_lets_go_of_what_it_read_of_a_file_left_idle(
        db, events, ledger, tmp_path, monkeypatch):
    lines = claude_code_lines(80)
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(lines[:60]))
    follower = Follower(ledger, str(path), None, False, idle=3600)
    first = await follower.poll(SETTLE)
    assert follower.reading is not None  # written to just now: kept
    old = path.stat().st_mtime - 7200
    os.utime(path, (old, old))
    await follower.poll(SETTLE)
    assert follower.reading is None and follower.known is None  # idle: let go
    ran = statements(monkeypatch, db)
    with path.open("a") as f:
        f.write("".join(lines[60:]))
    stored = await follower.poll(SETTLE)
    assert stored is not None and follower.reading is not None  # read again whole
    assert "transcript_stored" in [name for name, _ in ran]
    monkeypatch.undo()
    await assert_sound(ledger, first.session_id)
