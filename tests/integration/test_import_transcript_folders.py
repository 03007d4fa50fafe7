"""`ctxdag import-transcript PATH…` on folders laid out as the tools lay them out
(transcript_trees.py): each file imported on its own with a line and a summary, a failing
file reported while the walk goes on, `--since`, a walk killed at any point resumed
without duplicates, and a file its tool truncated or rewrote refused."""
import json
import os
import pty
import signal
import subprocess
import sys
import time

import pytest

from service.errors import BadInput
from service.transcripts import batch, model, pi
from tests.integration.helpers import assert_sound, run_command, runtime_for
from tests.transcript_trees import FIXTURES, SESSIONS, SIDE_FILES, tool_homes


async def run(ledger, capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    status = await run_command(runtime_for(ledger.db, ledger.tenant), "import-transcript",
                               *argv)
    said = capsys.readouterr()
    return status, said.out, said.err


async def test_a_folder_per_tool_imports_each_session_once(ledger, capsys, tmp_path):
    homes = tool_homes(tmp_path)
    status, out, err = await run(ledger, capsys, *map(str, homes.values()))
    assert status == 0, err
    said = out.splitlines()
    assert said[-1] == (f"{SESSIONS} files: {SESSIONS} new, 0 grown, 0 unchanged; "
                        f"{SIDE_FILES} sub-agent files (read with their sessions)")
    assert sum("imported as session" in line for line in said) == SESSIONS
    agents = model.session_id(ledger.tenant, "claude-code", "5c1d9e20-agents")
    assert (await ledger.sessions.get(agents)).node_count == 11  # its sub-agents with it
    assert await ledger.sessions.count() == SESSIONS
    for session in (await ledger.sessions.list(first=100)).items:
        await assert_sound(ledger, session.id)
    # Again: nothing new; a grown file only what it gained.
    _, out, _ = await run(ledger, capsys, *map(str, homes.values()))
    assert out.splitlines()[-1].startswith(f"{SESSIONS} files: 0 new, 0 grown, {SESSIONS} "
                                           "unchanged")


async def test_a_path_named_from_here_is_kept_as_the_absolute_path_it_names(
        ledger, capsys, tmp_path, monkeypatch):
    homes = tool_homes(tmp_path)
    monkeypatch.chdir(homes["codex"])
    relative = [str(p.relative_to(homes["codex"])) for p in homes["codex"].rglob("*.jsonl")][0]
    status, out, err = await run(ledger, capsys, relative)
    assert status == 0, err
    whole = str(homes["codex"] / relative)
    assert out.splitlines()[0].startswith(f"{whole}: imported as session ")
    [session] = (await ledger.sessions.list(first=10)).items
    assert session.source_file == whole
    monkeypatch.chdir(tmp_path)  # the same file named from elsewhere is recognised unread
    status, out, err = await run(ledger, capsys, whole)
    assert out.splitlines()[-1] == "1 file: 0 new, 0 grown, 1 unchanged"


async def test_a_rollout_codex_archives_is_listed_where_it_moved(ledger, capsys, tmp_path):
    homes = tool_homes(tmp_path)
    rollout = sorted(homes["codex"].rglob("rollout-*.jsonl"))[0]
    status, out, err = await run(ledger, capsys, str(rollout))
    sid = out.split("imported as session ")[1].split()[0]
    archived = tmp_path / ".codex" / "archived_sessions" / rollout.name
    archived.parent.mkdir()
    rollout.rename(archived)
    status, out, err = await run(ledger, capsys, str(archived.parent))
    assert status == 0, err
    assert out.splitlines()[0] == (f"{archived}: session {sid} gained no nodes; its title or "
                                   "source changed")
    assert (await ledger.sessions.get(sid)).source_file == str(archived)
    status, out, err = await run(ledger, capsys, str(archived.parent))
    assert out.splitlines()[-1] == "1 file: 0 new, 0 grown, 1 unchanged"  # and unread
    await assert_sound(ledger, sid)


async def test_no_path_takes_the_folders_where_the_tools_keep_sessions(
        ledger, capsys, tmp_path):
    async def run_with(home):
        capsys.readouterr()
        runtime = runtime_for(ledger.db, ledger.tenant, HOME=str(home), CLAUDE_CONFIG_DIR="",
                              PI_CODING_AGENT_DIR="", CODEX_HOME="")
        status = await run_command(runtime, "import-transcript")
        return status, capsys.readouterr().out

    with pytest.raises(BadInput, match="no PATH given, and no tool keeps sessions"):
        await run_with(tmp_path)
    assert await ledger.sessions.count() == 0
    homes = tool_homes(tmp_path)
    status, out = await run_with(tmp_path)
    assert status == 0, out
    said = out.splitlines()
    assert said[0] == "the tools' sessions on this machine: " + ", ".join(
        str(home) for home in homes.values())
    assert said[-1].startswith(f"{SESSIONS} files: {SESSIONS} new, 0 grown, 0 unchanged")
    assert await ledger.sessions.count() == SESSIONS


async def test_a_failing_file_is_reported_and_the_walk_goes_on(ledger, capsys, tmp_path):
    homes = tool_homes(tmp_path)
    day = next(homes["codex"].rglob("rollout-*.jsonl")).parent
    bad = day / "rollout-2025-09-14T07-00-00-0000-bad.jsonl"  # walked first of its folder
    bad.write_text(json.dumps({"type": "session_meta", "timestamp": "2025-09-14T07:00:00Z",
                               "payload": {"id": "bad"}}) + "\n"
                   + json.dumps({"type": "response_item"}) + "\n")
    (day / "notes.jsonl").write_text('{"type": "note"}\n')  # not a transcript
    (homes["claude-code"] / "-work-app" / "empty.jsonl").write_text("")
    status, out, err = await run(ledger, capsys, str(tmp_path))
    assert status == 1
    assert err == (f"error: BAD_INPUT: {bad}:2: a response_item line without a payload "
                   "object\n")
    assert f"{day / 'notes.jsonl'}: passed over: not a transcript of a known format" in out
    assert f"{homes['claude-code'] / '-work-app' / 'empty.jsonl'}: passed over: the file " \
        "is empty" in out
    assert out.splitlines()[-1].startswith(
        f"{SESSIONS + 3} files: {SESSIONS} new, 0 grown, 0 unchanged, 1 failed, 2 passed over")
    assert await ledger.sessions.count() == SESSIONS


async def test_a_path_not_in_utf8_or_a_fault_of_the_importer_fails_that_file_alone(
        ledger, capsys, tmp_path, monkeypatch):
    homes = tool_homes(tmp_path)
    claude = homes["claude-code"] / "-work-app"
    # Names a system holds as bytes that are not UTF-8 (Latin-1 here): a file, and a folder.
    (claude / os.fsdecode(b"caf\xe9.jsonl")).write_text((claude / "session.jsonl").read_text())
    latin = homes["claude-code"] / os.fsdecode(b"-work-d\xe9j\xe0")
    latin.mkdir()
    (latin / "streamed.jsonl").write_text((claude / "streamed.jsonl").read_text())
    # A fault of the importer's own while one file is parsed, and while another is stored.
    pi_take = pi.Parsing.take

    def parse_fault(self, line, entry):
        if self.file.endswith("_labels.jsonl") and line == 3:
            raise TypeError("a parse fault")
        return pi_take(self, line, entry)

    monkeypatch.setattr(pi.Parsing, "take", parse_fault)
    store = batch.store_transcript

    async def store_fault(db, tenant, document, *args):
        if "api_error.jsonl" in document["session"]["properties"]["source"]:
            raise KeyError("a store fault")
        return await store(db, tenant, document, *args)

    monkeypatch.setattr(batch, "store_transcript", store_fault)
    status, out, err = await run(ledger, capsys, str(tmp_path))
    assert status == 1
    errors = err.splitlines()
    assert len(errors) == 4, err
    for shown in (f"{claude}/caf\\xe9.jsonl", f"{homes['claude-code']}/-work-d\\xe9j\\xe0/"
                  "streamed.jsonl"):
        assert f"error: BAD_INPUT: {shown}: the path is not UTF-8, and a session keeps its " \
            "source's path as text: rename the file (or its folder) and import it again" \
            in errors
    (parse,) = [e for e in errors if "a parse fault" in e]
    assert parse.startswith("error: INTERNAL: ") and "_labels.jsonl: the importer failed on " \
        "this file (TypeError: a parse fault, at test_import_transcript_folders.py:" in parse
    assert parse.endswith("nothing of it is left half-written. This is a fault of ctxdag's: please "
                          "report it with the file's shape")
    (stored,) = [e for e in errors if "a store fault" in e]
    assert f"{claude / 'api_error.jsonl'}: the importer failed on this file (KeyError: " \
        "'a store fault', at test_import_transcript_folders.py:" in stored
    assert out.splitlines()[-1].startswith(
        f"{SESSIONS + 2} files: {SESSIONS - 2} new, 0 grown, 0 unchanged, 4 failed")
    assert await ledger.sessions.count() == SESSIONS - 2
    for session in (await ledger.sessions.list(first=100)).items:
        await assert_sound(ledger, session.id)


async def test_since_takes_the_files_changed_at_that_time_or_later(ledger, capsys, tmp_path):
    homes = tool_homes(tmp_path)
    old = time.time() - 10 * 86400
    for file in tmp_path.rglob("*.jsonl"):
        os.utime(file, (old, old))
    # A Claude Code session whose sub-agent wrote lately is a recent session.
    claude = homes["claude-code"] / "-work-app"
    agent = claude / "5c1d9e20-agents" / "subagents" / "agent-a1b2.jsonl"
    os.utime(agent, None)
    recent = claude / "session.jsonl"
    os.utime(recent, None)
    since = time.strftime("%Y-%m-%d", time.localtime(time.time() - 86400))
    status, out, err = await run(ledger, capsys, "--since", since, str(tmp_path))
    assert status == 0, err
    assert [line.split(":")[0] for line in out.splitlines()[:-1]] == [
        str(claude / "5c1d9e20-agents.jsonl"), str(recent)]
    assert f"; {SESSIONS - 2} files older than --since left out" in out.splitlines()[-1]
    with pytest.raises(BadInput, match="--since must be an ISO 8601 date"):
        await run(ledger, capsys, "--since", "last week", str(tmp_path))


def cli(neo4j_server, tenant: str, *argv: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password, "CTXDAG_TENANT": tenant}
    return subprocess.Popen([sys.executable, "-m", "service.cli", *argv], env=env,
                            text=True, **kwargs)


def finished(command: subprocess.Popen) -> tuple[int, str, str]:
    out, err = command.communicate(timeout=300)
    return command.returncode, out, err


async def test_a_walk_killed_at_any_point_resumes_without_duplicates(
        neo4j_server, ledger, tmp_path):
    homes = tool_homes(tmp_path / "homes")
    clean = f"{ledger.tenant}-clean"
    status, _, err = finished(cli(neo4j_server, clean, "import-transcript", str(tmp_path),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    assert status == 0, err
    for imported in (1, 5, 9):  # files done when the kill comes
        command = cli(neo4j_server, ledger.tenant, "import-transcript", str(tmp_path),
                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for _ in range(imported):
            command.stdout.readline()
        command.send_signal(signal.SIGKILL)
        command.wait(timeout=60)
    status, out, err = finished(cli(neo4j_server, ledger.tenant, "import-transcript",
                                    str(tmp_path), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE))
    assert status == 0, err
    assert " 0 grown, " in out.splitlines()[-1]  # each file whole or not there at all
    for tenant in (ledger.tenant, clean):
        status, out, err = finished(cli(neo4j_server, tenant, "check",
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        assert (status, out) == (0, f"ok: {SESSIONS} sessions checked\n"), err
    clean_ledger = type(ledger).open(ledger.db, clean, ledger.limits)
    assert await counts(ledger) == await counts(clean_ledger)
    assert len(homes) == 3


async def counts(ledger) -> dict[str, tuple[int, str]]:
    """{source session key: (nodes, HEAD's seq-free label)} of every session of the
    tenant: its size and where HEAD is, by the source entries of HEAD's node."""
    sessions = (await ledger.sessions.list(first=100)).items
    heads = {n.id: n for n in await ledger.nodes.get_many([s.head_id for s in sessions])}
    return {s.source["session"]: (s.node_count, json.dumps(
        heads[s.head_id].metadata.get("source", {}).get("entries"))) for s in sessions}


CODEX = FIXTURES / "codex" / "rollout-2025-09-14T08-00-00-0199a1b2-codex.jsonl"


async def test_a_file_truncated_or_rewritten_since_its_import_is_refused(
        ledger, capsys, tmp_path):
    lines = CODEX.read_text().splitlines(keepends=True)
    rollout = tmp_path / CODEX.name
    rollout.write_text("".join(lines[:20]) + lines[20][:30])  # a line still being written
    await run(ledger, capsys, str(rollout))
    sid = model.session_id(ledger.tenant, "codex", "0199a1b2-codex")
    before = await ledger.sessions.get(sid)
    imported = 0
    for cut in lines[:20]:
        imported += len(cut.encode())
    for text, says in (
            ("".join(lines[:12]), "is shorter than"),  # truncated
            ("".join(lines[:5]) + lines[6] + lines[5] + "".join(lines[7:]),  # rewritten
             "no longer begins with")):
        rollout.write_text(text)
        status, out, err = await run(ledger, capsys, str(rollout))
        assert status == 1
        assert err == (f"error: CONFLICT: {rollout}: the file {says} the {imported} bytes "
                       f"imported into session {sid} (its tool truncated or rewrote it); "
                       "nothing written: an import only adds what a file gained\n")
        assert (await ledger.sessions.get(sid)) == before
    # The line being written, finished, and what followed it: the file grew.
    rollout.write_text("".join(lines))
    status, out, err = await run(ledger, capsys, str(rollout))
    assert status == 0 and f"session {sid} gained" in out, err
    await assert_sound(ledger, sid)


def test_a_progress_line_on_a_terminal_and_none_piped(neo4j_server, tenant, tmp_path):
    tool_homes(tmp_path)
    controller, terminal = pty.openpty()
    command = cli(neo4j_server, tenant, "import-transcript", str(tmp_path),
                  stdout=subprocess.PIPE, stderr=terminal)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed with the command
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    out, _ = command.communicate(timeout=300)
    assert command.returncode == 0
    drawn = shown.decode()
    assert f"\r[{'#' * 24}] {SESSIONS}/{SESSIONS} files, " in drawn
    assert " entries/s, " in drawn and " left" in drawn
    assert drawn.endswith("\r\x1b[K")  # taken away at the end
    assert "\r" not in out and "entries/s" not in out
    status, out, err = finished(cli(neo4j_server, tenant, "import-transcript", str(tmp_path),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    assert status == 0 and err == ""  # piped: no progress line
    assert out.splitlines()[-1].startswith(f"{SESSIONS} files: 0 new, 0 grown")


async def test_an_unchanged_folder_is_recognised_without_parsing_a_file(
        ledger, capsys, tmp_path, monkeypatch):
    from service import transcripts
    homes = tool_homes(tmp_path)
    status, _, err = await run(ledger, capsys, str(tmp_path))
    assert status == 0, err
    counts = {s.id: s.node_count for s in (await ledger.sessions.list(first=100)).items}
    parsed: list[str] = []

    feed, side = transcripts.Reading.feed, transcripts.Reading._side

    def fed(reading, text):  # every read parses a file's lines through these two
        parsed.append(reading.file)
        return feed(reading, text)

    def side_read(reading, agent, mode):
        parsed.append(agent.file)
        return side(reading, agent, mode)

    monkeypatch.setattr(transcripts.Reading, "feed", fed)
    monkeypatch.setattr(transcripts.Reading, "_side", side_read)
    status, out, err = await run(ledger, capsys, str(tmp_path))
    assert status == 0, err
    assert parsed == []
    assert out.splitlines()[-1].startswith(f"{SESSIONS} files: 0 new, 0 grown, {SESSIONS} "
                                           "unchanged")
    assert {s.id: s.node_count for s in (await ledger.sessions.list(first=100)).items} == counts
    # A sub-agent's file that grew is no unchanged session: its session is read again.
    agent = next(homes["claude-code"].rglob("subagents/agent-a1b2.jsonl"))
    last = json.loads(agent.read_text().splitlines()[-1])
    agent.write_text(agent.read_text() + json.dumps(
        {**last, "uuid": "a1b2-grown", "parentUuid": last["uuid"], "type": "user",
         "message": {"role": "user", "content": "and one more thing"}}) + "\n")
    status, out, err = await run(ledger, capsys, str(tmp_path))
    assert status == 0, err
    assert parsed and all("5c1d9e20-agents" in file for file in parsed)
    assert out.splitlines()[-1].startswith(f"{SESSIONS} files: 0 new, 1 grown, "
                                           f"{SESSIONS - 1} unchanged")


async def test_the_next_file_is_read_and_checked_while_the_last_is_written(
        ledger, capsys, tmp_path, monkeypatch):
    """The walk is a pipeline: a file's parse (and a new session's check) runs while the
    file before it is being stored, and the store does not check that document again."""
    from service.store import backup, transcripts as stored_transcripts
    from service.transcripts import batch
    tool_homes(tmp_path)
    happened: list[str] = []
    storing = 0

    real_read, real_check, real_store = batch.document_of, backup.check, batch.store_transcript
    real_ready = batch.ready

    async def ready(*args, **kwargs):
        happened.append(f"ready{'+' if storing else ''}")
        return await real_ready(*args, **kwargs)

    def read(*args, **kwargs):
        happened.append(f"read{'+' if storing else ''}")
        return real_read(*args, **kwargs)

    def check(document, limits):
        happened.append(f"check{'+' if storing else ''}")
        return real_check(document, limits)

    async def store(*args, **kwargs):
        nonlocal storing
        storing += 1
        try:
            return await real_store(*args, **kwargs)
        finally:
            storing -= 1

    monkeypatch.setattr(batch, "document_of", read)
    monkeypatch.setattr(backup, "check", check)  # import_session's own check
    monkeypatch.setattr(stored_transcripts, "check", check)  # the walk's, ahead of it
    monkeypatch.setattr(batch, "store_transcript", store)
    monkeypatch.setattr(batch, "ready", ready)
    status, out, err = await run(ledger, capsys, str(tmp_path))
    assert status == 0, err
    assert out.splitlines()[-1].startswith(f"{SESSIONS} files: {SESSIONS} new")
    # One read and one check per session (none again when it is stored)...
    assert happened.count("read") + happened.count("read+") == SESSIONS
    assert happened.count("check") + happened.count("check+") == SESSIONS
    # ...and all but the first file's preparation begun while another was being written
    # (whether its parse too still overlaps that write depends on how long the write lasts).
    assert happened.count("ready+") == SESSIONS - 1 and happened.count("ready") == 1


async def test_a_session_checked_as_new_is_written_without_reading_it_back_unless_it_came_since(
        ledger, monkeypatch):
    """The walk checks a session it found new ahead of its write, and the write then reads
    nothing back (no transcript_stored); a session another import stored in between is
    extended by what the file holds beyond it, not refused, nothing written twice."""
    from pathlib import Path
    from service import transcripts
    from service.store.transcripts import first_import_check, store_transcript
    session = Path(FIXTURES) / "claude_code" / "session.jsonl"
    lines = session.read_text().splitlines(keepends=True)

    def document(count, name=session.name):
        return transcripts.read("".join(lines[:count]), name, "claude-code", ledger.tenant,
                                ledger.limits)

    reads: list[str] = []
    real_read = ledger.db.read_on_leader

    async def read_on_leader(name, *args, **kwargs):
        reads.append(name)
        return await real_read(name, *args, **kwargs)

    monkeypatch.setattr(ledger.db, "read_on_leader", read_on_leader)
    alone = document(len(lines), "alone.jsonl")
    stored = await store_transcript(ledger.db, ledger.tenant, alone, ledger.limits,
                                    ledger.events, first_import_check(alone, ledger.limits))
    assert stored.created and "transcript_stored" not in reads
    await assert_sound(ledger, stored.session_id)

    whole = document(21)
    checked = first_import_check(whole, ledger.limits)  # as the walk checks a new session
    first = await store_transcript(ledger.db, ledger.tenant, document(17), ledger.limits,
                                   ledger.events)
    stored = await store_transcript(ledger.db, ledger.tenant, whole, ledger.limits,
                                    ledger.events, checked)
    assert (stored.session_id, stored.created) == (first.session_id, False)
    assert stored.written == len(whole["nodes"]) - first.nodes == 3
    assert (await ledger.sessions.get(stored.session_id)).node_count == len(whole["nodes"])
    await assert_sound(ledger, stored.session_id)
