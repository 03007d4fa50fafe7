"""What following a long file costs at each growth (service/transcripts/follow.py): the
follower parses only the lines the file gained, maps only the turns they change, and
stores them from what its last import stored, without reading back which of the
session's nodes are stored; a session someone else went on with meanwhile is read back
whole, and a file rewritten where the follower last read is refused. Counted, never
timed; each session is compared with the whole file imported at once."""
import itertools
import json
import os

import pytest

from service.errors import BadInput, Conflict
from service.transcripts.batch import import_text
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


def rows_looked_at(monkeypatch) -> list:
    """The document rows (store.transcript_known.DocumentRows) each import makes from now
    on."""
    from service.store import transcripts
    made = []

    def recorded(*args, _original=transcripts.DocumentRows):
        made.append(_original(*args))
        return made[-1]

    monkeypatch.setattr(transcripts, "DocumentRows", recorded)
    return made


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
        looked = rows_looked_at(monkeypatch)
        ran = statements(monkeypatch, db)
        with path.open("a") as f:
            f.write(line)
        stored = await follower.poll(SETTLE)
        assert follower.reading is reading  # read on, not again
        assert reading.parsed - parsed == 1  # the line it gained, not the file
        written = stored.written if stored is not None else 0
        assert reading.memo.built - built == written  # only the turns it stored were mapped
        # The store looks only at the rows after those its last import stored as they are.
        assert looked and all(rows.settled > 500 and len(rows.digests) == written
                              for rows in looked), [(r.settled, len(r.digests)) for r in looked]
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


async def test_a_large_followed_file_is_first_imported_in_parts_its_tail_held_back(
        db, events, ledger, tmp_path, monkeypatch):
    """A followed file large enough to be read a part at a time, its session new, is first
    stored in parts as a folder import stores it (the follower never holds its document):
    the same session the whole read stores, its growing tail held back the same way; the
    follower then reads on from that reading."""
    from service.store import transcript_parts
    from service.transcripts import follow
    from tests.integration.test_transcript_growth import _dump

    lines = claude_code_lines(400)
    first_text = "".join(lines[:302])  # ends on a response's first block: held back
    path = tmp_path / "long-session.jsonl"
    path.write_text(first_text)
    # The reference: the same text followed whole, in a tenant of its own.
    whole_ledger = type(ledger).open(db, f"{ledger.tenant}-whole", ledger.limits,
                                     events.committed)
    reference = await Follower(whole_ledger, str(path), None, False).poll(SETTLE)
    monkeypatch.setattr(follow, "STREAM_FROM_BYTES", 0)
    monkeypatch.setattr(transcript_parts, "PART_NODES", 3)
    parts = []
    in_parts = transcript_parts.import_in_parts
    monkeypatch.setattr(follow, "import_in_parts",
                        lambda *a, **k: parts.append(a[2].size) or in_parts(*a, **k))
    follower = Follower(ledger, str(path), None, False)
    first = await follower.poll(SETTLE)
    assert first is not None and first.created and parts == [first.nodes]
    dump = await _dump(ledger, first.session_id)
    assert dump == await _dump(whole_ledger, reference.session_id)
    assert "Reading 108." in json.dumps(dump) and "Reading 109." not in json.dumps(dump)
    assert follower.reading is not None and follower.known is not None
    reading = follower.reading
    built = reading.memo.built  # the rows the parts were built from, kept for the growth
    ran, looked = statements(monkeypatch, db), rows_looked_at(monkeypatch)
    end = next(i for i in range(302, len(lines))
               if isinstance(json.loads(lines[i])["message"]["content"], str)) + 1
    with path.open("a") as f:
        f.write("".join(lines[302:end]))
    grown = await follower.poll(SETTLE)
    assert grown is not None and grown.written > 0 and follower.reading is reading
    assert reading.memo.built - built == grown.written  # only the turns it stored mapped
    # The rows the parts were built from are known stored: only those after them are read.
    assert [rows.settled for rows in looked] == [first.nodes]
    assert [name for name, _ in ran] == ["transcript_known", "transcript_extend"]
    assert len(parts) == 1  # a growth is stored as a growth
    monkeypatch.undo()
    await assert_sound(ledger, first.session_id)
    await same_as_imported_whole(db, events, ledger, first.session_id,
                                 "".join(lines[:end]), str(path))


async def test_a_large_file_imported_before_is_known_to_its_follower_unread(
        db, events, ledger, tmp_path, monkeypatch):
    """Its first poll recognises a large file imported whole before by its fingerprint,
    and one whose session grew since is read a part at a time, as a growth
    (store/transcript_growth.py), never whole: the session the whole read stores. The
    follower keeps the rows it built, so the next growth looks only at the rows after
    them."""
    from service.store import transcript_growth, transcript_parts
    from service.transcripts import follow

    lines = claude_code_lines(400)
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(lines[:100]))
    stored = await import_text(ledger, path.read_text(), str(path), None)
    monkeypatch.setattr(follow, "STREAM_FROM_BYTES", 0)
    monkeypatch.setattr(transcript_parts, "PART_NODES", 3)
    monkeypatch.setattr(follow, "import_in_parts", None)  # never reached
    monkeypatch.setattr(follow, "reading_of", None)  # never read whole
    follower = Follower(ledger, str(path), None, False)
    assert await follower.poll(SETTLE) is None
    assert follower.last.session_id == stored.session_id and follower.reading is None
    grows = []
    grow = transcript_growth.grow_in_parts
    monkeypatch.setattr(follow, "grow_in_parts",
                        lambda *a, **k: grows.append(a[2].size) or grow(*a, **k))
    end = next(i for i in range(300, len(lines))
               if isinstance(json.loads(lines[i])["message"]["content"], str)) + 1
    with path.open("a") as f:
        f.write("".join(lines[100:end]))
    follower = Follower(ledger, str(path), None, False)
    grown = await follower.poll(SETTLE)
    assert grown is not None and grown.written > 0 and not grown.created
    assert len(grows) == 1 and follower.reading is not None
    assert follower.known is not None and follower.known.rows is not None
    await same_as_imported_whole(db, events, ledger, stored.session_id,
                                 "".join(lines[:end]), str(path))
    # The next growth: read on, stored from the rows after those the growth kept.
    reading = follower.reading
    looked, ran = rows_looked_at(monkeypatch), statements(monkeypatch, db)
    with path.open("a") as f:
        f.write("".join(lines[end:]))
    again = await follower.poll(SETTLE)
    assert again is not None and again.written > 0 and follower.reading is reading
    assert [rows.settled for rows in looked] == [len(follower.known.rows) - again.written] \
        and looked[0].settled > 0
    assert "transcript_stored" not in [name for name, _ in ran] and len(grows) == 1
    monkeypatch.undo()
    assert await follower.poll(0.0) is not None  # quiet: its last response stored too
    await assert_sound(ledger, stored.session_id)
    await same_as_imported_whole(db, events, ledger, stored.session_id, "".join(lines),
                                 str(path))


async def test_every_fixture_followed_in_parts_is_the_session_followed_whole(
        db, events, ledger, tmp_path, monkeypatch):
    """Every format and shape of the suite's fixtures (compactions, sub-agents, labels,
    tools, media, degraded entries), followed: its first import in parts of three nodes
    stores what the follower's whole read stores, its growing tail held back the same."""
    from service.store import transcript_parts
    from service.store.ledger import Ledger
    from service.transcripts import follow
    from service.transcripts.walk import transcript_files
    from tests.integration.test_transcript_growth import _dump
    from tests.transcript_trees import tool_homes

    homes = [str(path) for path in tool_homes(tmp_path / "tool-homes").values()]
    files = transcript_files(homes).files
    tenant = ledger.tenant
    whole = Ledger.open(db, f"{tenant}-whole", ledger.limits, events.committed)
    parts = Ledger.open(db, f"{tenant}-parts", ledger.limits, events.committed)
    first_polls, imports = [], []
    in_parts_import = transcript_parts.import_in_parts
    for file in files:
        monkeypatch.setattr(follow, "STREAM_FROM_BYTES", 1 << 40)
        at_once = await Follower(whole, file, None, False).poll(SETTLE)
        monkeypatch.setattr(follow, "STREAM_FROM_BYTES", 0)
        monkeypatch.setattr(transcript_parts, "PART_NODES", 3)
        monkeypatch.setattr(follow, "import_in_parts",
                            lambda *a, **k: imports.append(a[2]) or in_parts_import(*a, **k))
        follower = Follower(parts, file, None, False)
        in_parts = await follower.poll(SETTLE)
        monkeypatch.undo()
        assert (at_once is None) == (in_parts is None), file
        if at_once is None:
            continue
        first_polls.append(file)
        assert in_parts.created and follower.known is not None, file
        assert await _dump(parts, in_parts.session_id) == \
            await _dump(whole, at_once.session_id), file
        await assert_sound(parts, in_parts.session_id)
    assert len(first_polls) >= 15  # the sessions of three formats, sub-agents read with theirs
    assert len(imports) == len(first_polls)  # each in parts


async def test_every_fixture_grown_since_its_import_is_followed_in_parts_as_whole(
        db, events, ledger, tmp_path, monkeypatch):
    """Every fixture of the suite, its first third or two thirds imported, then followed
    whole: its follower's first poll reads it a part at a time as a growth (parts of three
    nodes, its growing tail held back) and stores what a follower reading it whole stores,
    then both store its quiet end alike."""
    from service.store import transcript_growth, transcript_parts
    from service.store.ledger import Ledger
    from service.transcripts import follow
    from tests.integration.test_transcript_growth import _dump
    from tests.transcript_trees import tool_homes

    homes = tool_homes(tmp_path / "tool-homes")
    files = [path for home in homes.values() for path in sorted(home.rglob("*.jsonl"))
             if "subagents" not in path.parts and not path.name.startswith("agent-")]
    tenant = ledger.tenant
    originals = {}
    grows = []
    grow = transcript_growth.grow_in_parts
    for path, third in itertools.product(files, (1, 2)):
        lines = originals.setdefault(path, path.read_text()).splitlines(keepends=True)
        path.write_text("".join(lines[:len(lines) * third // 3]))
        ledgers = {way: Ledger.open(db, f"{tenant}-{way}-{third}", ledger.limits,
                                    events.committed) for way in ("whole", "parts")}
        sessions = {}
        for way, held in ledgers.items():
            try:
                sessions[way] = (await import_text(held, path.read_text(), str(path),
                                                   None)).session_id
            except BadInput as e:
                assert "holds no conversation turns" in e.message, (path, third)
                sessions[way] = None  # too little yet to be a session
        path.write_text("".join(lines))
        followers = {way: Follower(held, str(path), None, False)
                     for way, held in ledgers.items()}
        for settle in (SETTLE, 0.0):  # its growing tail held back, then quiet
            for way, follower in followers.items():
                monkeypatch.setattr(follow, "STREAM_FROM_BYTES",
                                    1 << 40 if way == "whole" else 0)
                monkeypatch.setattr(transcript_parts, "PART_NODES", 3)
                monkeypatch.setattr(follow, "grow_in_parts", lambda *a, **k: grows.append(
                    (path, third)) or grow(*a, **k))
                await follower.poll(settle)
                monkeypatch.undo()
                sessions[way] = sessions[way] or follower.last.session_id
            assert await _dump(ledgers["parts"], sessions["parts"]) == \
                await _dump(ledgers["whole"], sessions["whole"]), (path, third, settle)
        await assert_sound(ledgers["parts"], sessions["parts"])
    assert len(set(grows)) >= 30 and len(grows) == len(set(grows))  # each grown in parts


async def test_an_idle_large_file_is_imported_in_parts_and_let_go_without_its_rows(
        ledger, tmp_path, monkeypatch):
    """A folder's follower takes a large file its tool no longer writes to in parts, keeping
    none of the rows it built (nor, once stored, its reading)."""
    from service.store import transcript_parts
    from service.transcripts import follow, streamed

    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(claude_code_lines(120)))
    old = path.stat().st_mtime - 7200
    os.utime(path, (old, old))
    monkeypatch.setattr(follow, "STREAM_FROM_BYTES", 0)
    monkeypatch.setattr(transcript_parts, "PART_NODES", 3)
    kept = []
    read_complete = streamed.read_complete
    monkeypatch.setattr(streamed, "read_complete",
                        lambda *a, **k: kept.append(a[-1]) or read_complete(*a, **k))
    follower = Follower(ledger, str(path), None, False, idle=3600)
    stored = await follower.poll(SETTLE)
    assert stored is not None and stored.created
    assert kept == [False] and follower.reading is None and follower.known is None
    await assert_sound(ledger, stored.session_id)


async def test_every_fixture_grown_a_few_lines_a_poll_stores_what_looking_at_every_row_does(
        db, events, ledger, tmp_path, monkeypatch):
    """A growth stored from the rows after those the last import stored as they are
    (store.transcript_known) writes what one looking at every row of the document writes:
    every fixture of the suite (compactions, sub-agents, labels, tools, media, results
    arriving after what they answer), grown three lines a poll and quiet at the end."""
    from tests.transcript_trees import tool_homes

    homes = tool_homes(tmp_path / "tool-homes")
    files = [path for home in homes.values() for path in sorted(home.rglob("*.jsonl"))
             if "subagents" not in path.parts and not path.name.startswith("agent-")]
    looked = rows_looked_at(monkeypatch)
    for path in files:
        lines = path.read_text().splitlines(keepends=True)
        await grown_both_ways(db, events, ledger, path, lines,
                              [(cut, False) for cut in range(3, len(lines), 3)]
                              + [(len(lines), False), (len(lines), True)])
    assert sum(rows.settled > 0 for rows in looked) >= 20  # the growths that took that way


async def test_every_fixture_imported_in_parts_then_grown_stores_what_looking_at_every_row_does(
        db, events, ledger, tmp_path, monkeypatch):
    """A followed file first imported in parts keeps the rows it was built from, so its
    growths are stored from the rows after them: every fixture cut at 60%, imported in
    parts of three nodes, every turn set aside on disk, then grown three lines a poll,
    stores what a follower looking at every row stores."""
    from service.store import transcript_parts
    from service.transcripts import follow, reading
    from tests.transcript_trees import tool_homes

    monkeypatch.setattr(follow, "STREAM_FROM_BYTES", 0)
    monkeypatch.setattr(transcript_parts, "PART_NODES", 3)
    monkeypatch.setattr(reading, "LIVE_TURNS", 0)
    homes = tool_homes(tmp_path / "tool-homes")
    files = [path for home in homes.values() for path in sorted(home.rglob("*.jsonl"))
             if "subagents" not in path.parts and not path.name.startswith("agent-")]
    imported = []
    in_parts = follow.import_in_parts

    async def recorded(*args, **kwargs):
        stored, known = await in_parts(*args, **kwargs)
        set_aside = any(turn.aside is not None for turn in args[2].plan.transcript.turns)
        imported.append(known is not None and known.rows is not None and set_aside)
        return stored, known

    monkeypatch.setattr(follow, "import_in_parts", recorded)
    looked = rows_looked_at(monkeypatch)
    for path in files:
        lines = path.read_text().splitlines(keepends=True)
        first = len(lines) * 6 // 10
        await grown_both_ways(db, events, ledger, path, lines,
                              [(cut, False) for cut in range(first, len(lines), 3)]
                              + [(len(lines), False), (len(lines), True)])
    assert len(imported) >= 30 and all(imported)  # each first import (two tenants) in parts
    assert sum(rows.settled > 0 for rows in looked) >= 30  # the growths that took that way


async def test_a_branch_from_a_turn_stored_with_what_follows_it_keeps_what_follows_it(
        db, events, ledger, tmp_path, monkeypatch):
    """A growth hanging a new turn from a turn whose reply is stored (a Pi session
    branched from its first prompt's reply): the reply's line is not the new turn's, and
    stays, in the growth stored from the rows after the known ones as in one looking at
    every row."""
    def entry(key, parent, role, text):
        content = text if role == "user" else [{"type": "text", "text": text}]
        message = {"role": role, "content": content, "timestamp": 1}
        if role == "assistant":
            message.update(api="anthropic-messages", provider="anthropic", model="claude-x",
                           stopReason="stop", usage={"input": 1, "output": 1})
        return json.dumps({"type": "message", "id": key, "parentId": parent,
                           "timestamp": f"2025-07-01T09:00:{len(key):02d}.000Z",
                           "message": message}) + "\n"

    lines = [json.dumps({"type": "session", "version": 3, "id": "branch-pi",
                         "timestamp": "2025-07-01T09:00:00.000Z", "cwd": "/w"}) + "\n",
             entry("e1", None, "user", "Q1"), entry("e2", "e1", "assistant", "A1"),
             entry("e3", "e2", "user", "Q2"), entry("e4", "e3", "assistant", "A2"),
             entry("e5", "e2", "user", "Q2, asked otherwise"),
             entry("e66", "e5", "assistant", "A2, otherwise")]
    path = tmp_path / "2025-07-01T09-00-00-000Z_branch-pi.jsonl"
    looked = rows_looked_at(monkeypatch)
    ran = statements(monkeypatch, db)
    settled = await grown_both_ways(db, events, ledger, path, lines,
                                    [(5, False), (5, True), (6, False), (7, False), (7, True)])
    # e4 let through once quiet; e5 hanging from e2, its reply e3 stored; then e66.
    assert [(rows.settled, len(rows.digests)) for rows in looked if rows.settled] == \
        [(4, 1), (5, 1), (6, 0), (6, 1)], [(r.settled, len(r.digests)) for r in looked]
    extended = [params for name, params in ran if name == "transcript_extend"]
    assert sum(len(params["nodes"]) for params in extended) == 2 * 3  # e4, e5, e66, twice
    assert not any(params["rewritten"] or params["replaced"] for params in extended)
    dump = await _dump(settled, (await settled.sessions.list(first=5)).items[0].id)
    assert {"user:e3", "assistant:e4", "user:e5", "assistant:e66"} <= {
        f"{n['properties']['role']}:{json.loads(n['properties']['metadata'])['source']['entries'][0]}"
        for n in dump["nodes"] if n["properties"]["role"] != "system"}


async def grown_both_ways(db, events, ledger, path, lines, cuts):
    """`path` written with `lines` cut as `cuts` says ((lines, quiet) a poll), followed in
    two tenants, the second made to look at every row of each document; both sessions
    compared at the end (and checked sound); the first tenant's ledger."""
    from service.store.ledger import Ledger
    from tests.integration.test_transcript_growth import _dump

    tenant = ledger.tenant
    settled = Ledger.open(db, f"{tenant}-settled", ledger.limits, events.committed)
    every = Ledger.open(db, f"{tenant}-every", ledger.limits, events.committed)
    followers = {"settled": Follower(settled, str(path), None, False),
                 "every": Follower(every, str(path), None, False)}
    last = {}
    for cut, quiet in cuts:
        path.write_text("".join(lines[:cut]))
        for run, follower in followers.items():
            stored = await follower.poll(0.0 if quiet else SETTLE)
            last[run] = stored or last.get(run)
            if run == "every" and follower.known is not None:
                follower.known = follower.known.without_rows()
    if last["settled"] is None:
        assert last["every"] is None, path
        return settled
    assert await _dump(settled, last["settled"].session_id) == \
        await _dump(every, last["every"].session_id), path
    await assert_sound(settled, last["settled"].session_id)
    return settled


async def test_a_follower_has_neo4j_plan_the_growth_statements_while_it_first_imports(
        db, ledger, tmp_path, monkeypatch):
    """So the first growth does not wait 0.3-1 s for each statement's first plan."""
    import asyncio

    from service.store.transcripts import GROWTH_STATEMENTS
    from service.transcripts.follow import follow

    planned = []

    async def recorded(names=None, _original=db.plan_statements):
        planned.append(await _original(names))
        return planned[-1]

    monkeypatch.setattr(db, "plan_statements", recorded)
    path = tmp_path / "long-session.jsonl"
    path.write_text("".join(claude_code_lines(60)))
    stop, seen = asyncio.Event(), []
    task = asyncio.create_task(follow(ledger, str(path), None, stop, seen.append,
                                      interval=0.05, settle=SETTLE))
    for _ in range(400):
        if seen and planned:
            break
        await asyncio.sleep(0.05)
    stop.set()
    last = await task
    assert planned == [list(GROWTH_STATEMENTS)] and last is not None and last.created
