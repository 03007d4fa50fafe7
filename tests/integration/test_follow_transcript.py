"""`ctxdag import-transcript --follow FILE`, run as a user runs it, while the test appends
to the file as Codex would: the session grows with each complete line, a partial line
waits, a turn still growing is held back, and SIGTERM stops it with one line."""
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Iterator

from service.errors import NotFound
from service.store.backup import export_session
from service.transcripts import model
from tests.integration.helpers import assert_sound

CODEX = Path(__file__).parent.parent / "fixtures" / "transcripts" / "codex" / \
    "rollout-2025-09-14T08-00-00-0199a1b2-codex.jsonl"
SESSION = "0199a1b2-codex"


@contextlib.contextmanager
def following(neo4j_server, tenant: str, *paths, settle: str = "3600",
              home=None) -> Iterator[subprocess.Popen]:
    """`ctxdag import-transcript --follow PATHS` as a user starts it (polling every 0.1 s),
    killed if the block leaves it running; with `home`, a machine whose tools keep their
    sessions under it."""
    env = {**os.environ, "NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password, "CTXDAG_TENANT": tenant}
    if home is not None:
        env["HOME"] = str(home)
        for variable in ("CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR", "CODEX_HOME"):
            env.pop(variable, None)
    command = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "import-transcript", "--follow", *map(str, paths),
         "--poll", "0.1", "--settle", settle],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield command
    finally:
        if command.poll() is None:
            command.kill()
            command.communicate()


def stopped(command: subprocess.Popen) -> tuple[str, str]:
    """What the follower said once stopped as a user stops it (SIGTERM)."""
    command.send_signal(signal.SIGTERM)
    return command.communicate(timeout=60)


async def node_count(ledger, sid: str, count: int) -> None:
    """Waits until the session holds `count` nodes (the command imports on its own time)."""
    for _ in range(600):
        try:
            if (await ledger.sessions.get(sid)).node_count == count:
                return
        except NotFound:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError(f"the session never held {count} nodes")


async def test_follow_imports_what_the_file_gains(neo4j_server, ledger, tmp_path):
    lines = CODEX.read_text().splitlines(keepends=True)
    rollout = tmp_path / CODEX.name
    rollout.write_text("".join(lines[:7]) + lines[7][:25])  # line 8 is half written
    with following(neo4j_server, ledger.tenant, rollout) as command:
        sid = model.session_id(ledger.tenant, "codex", SESSION)

        def grow_to(last: int) -> None:
            """Appends what the file lacks of lines 1..`last`."""
            held, whole = rollout.read_text(), "".join(lines[:last])
            with rollout.open("a") as f:
                f.write(whole[len(held):])

        await node_count(ledger, sid, 4)  # ROOT, the developer, context and user messages
        grow_to(13)  # the rest of line 8 .. line 13: parallel calls, outputs, a reply
        await node_count(ledger, sid, 6)  # the reply, at the end, may still grow: held
        grow_to(20)  # the next user turn, a patch and its output, a reply
        await node_count(ledger, sid, 10)
        out, err = stopped(command)
    assert command.returncode == 0, err
    said = out.splitlines()
    assert said[0] == f"{rollout}: imported as session {sid} (4 nodes)"
    assert said[-1] == f"{rollout}: stopped following (session {sid}, 10 nodes)"
    await assert_sound(ledger, sid)
    session = await ledger.sessions.get(sid)
    nodes = await ledger.nodes.get_many(
        [model.node_id(ledger.tenant, "codex", SESSION, k) for k in ("line10", "line12")])
    assert [n.role.value for n in nodes] == ["assistant", "tool"]
    assert nodes[1].predecessor_id == nodes[0].id  # both results in, no cancelled ones
    assert session.head_id == model.node_id(ledger.tenant, "codex", SESSION, "line19")


CLAUDE = CODEX.parent.parent / "claude_code" / "session.jsonl"
AGENTS = CODEX.parent.parent / "claude_code" / "agents"


async def session_exists(ledger, sid: str) -> None:
    for _ in range(600):
        try:
            await ledger.sessions.get(sid)
            return
        except NotFound:
            await asyncio.sleep(0.1)
    raise AssertionError(f"session {sid} never came")


async def test_follow_a_folder_takes_new_files_and_growth(neo4j_server, ledger, tmp_path):
    lines = CODEX.read_text().splitlines(keepends=True)
    day = tmp_path / "sessions" / "2025" / "09" / "14"
    day.mkdir(parents=True)
    rollout = day / CODEX.name
    rollout.write_text("".join(lines[:7]))
    with following(neo4j_server, ledger.tenant, tmp_path) as command:
        sid = model.session_id(ledger.tenant, "codex", SESSION)
        claude_sid = model.session_id(ledger.tenant, "claude-code", "later")
        await node_count(ledger, sid, 4)
        # A session the tool starts meanwhile, in a folder of its own; a sub-agent file
        # beside it is no session (it is read with it).
        project = tmp_path / "projects" / "-work-app"
        (project / "later" / "subagents").mkdir(parents=True)
        (project / "later" / "subagents" / "agent-x.jsonl").write_text(
            (AGENTS / "5c1d9e20-agents" / "subagents" / "agent-c3d4.jsonl").read_text())
        (project / "notes.jsonl").write_text('{"type": "note"}\n')  # passed over
        (project / "empty.jsonl").write_text("")  # just created
        (project / "bad.jsonl").write_text(CLAUDE.read_text().replace('"uuid": "u1"',
                                                                      '"uuid": ""'))
        (project / os.fsdecode(b"caf\xe9.jsonl")).write_text(CLAUDE.read_text())  # Latin-1
        (project / "later.jsonl").write_text(CLAUDE.read_text())
        await session_exists(ledger, claude_sid)
        with rollout.open("a") as f:
            f.write("".join(lines[7:20]))
        await node_count(ledger, sid, 10)
        out, err = stopped(command)
    assert command.returncode == 0, err
    nodes = (await ledger.sessions.get(sid)).node_count + \
        (await ledger.sessions.get(claude_sid)).node_count
    said = out.splitlines()
    assert said[-1] == f"{tmp_path}: stopped following (2 sessions, {nodes} nodes)"
    assert f"{project / 'later.jsonl'}: imported as session {claude_sid}" in out
    assert await ledger.sessions.count() == 2
    assert sorted(err.splitlines()) == [  # each once, not at every poll
        f"error: BAD_INPUT: {project / 'bad.jsonl'}:2: a user entry without a uuid",
        f"error: BAD_INPUT: {project}/caf\\xe9.jsonl: the path is not UTF-8, and a session "
        "keeps its source's path as text: rename the file (or its folder) and import it again"]
    await assert_sound(ledger, sid)
    await assert_sound(ledger, claude_sid)


async def test_a_followed_folder_gone_is_told_once_and_followed_again_when_back(
        neo4j_server, ledger, tmp_path):
    lines = CODEX.read_text().splitlines(keepends=True)
    home, away = tmp_path / "home", tmp_path / "away"
    day = home / "sessions" / "2025" / "09" / "14"
    day.mkdir(parents=True)
    (day / CODEX.name).write_text("".join(lines[:7]))
    with following(neo4j_server, ledger.tenant, home) as command:
        sid = model.session_id(ledger.tenant, "codex", SESSION)
        await node_count(ledger, sid, 4)
        home.rename(away)  # a home moved away, or its disk unmounted
        await asyncio.sleep(1.5)  # fifteen polls
        with (away / "sessions" / "2025" / "09" / "14" / CODEX.name).open("a") as f:
            f.write("".join(lines[7:20]))
        away.rename(home)
        await node_count(ledger, sid, 10)
        out, err = stopped(command)
    assert command.returncode == 0, err
    assert err.splitlines() == [  # each once, not at every poll
        f"error: BAD_INPUT: {home}: the folder is gone; its files are followed again once "
        "it is back",
        f"error: BAD_INPUT: cannot read {day / CODEX.name}: No such file or directory"]
    assert out.splitlines()[-1] == f"{home}: stopped following (1 session, 10 nodes)"
    await assert_sound(ledger, sid)


async def test_follow_without_a_path_follows_the_tools_own_folders(
        neo4j_server, ledger, tmp_path):
    lines = CODEX.read_text().splitlines(keepends=True)
    day = tmp_path / ".codex" / "sessions" / "2025" / "09" / "14"
    day.mkdir(parents=True)
    (day / CODEX.name).write_text("".join(lines[:7]))
    project = tmp_path / ".claude" / "projects" / "-work-app"
    project.mkdir(parents=True)  # Claude Code's folder, empty until its first session
    with following(neo4j_server, ledger.tenant, home=tmp_path) as command:
        sid = model.session_id(ledger.tenant, "codex", SESSION)
        claude_sid = model.session_id(ledger.tenant, "claude-code", "later")
        await node_count(ledger, sid, 4)
        (project / "later.jsonl").write_text(CLAUDE.read_text())
        await session_exists(ledger, claude_sid)
        with (day / CODEX.name).open("a") as f:
            f.write("".join(lines[7:20]))
        await node_count(ledger, sid, 10)
        out, err = stopped(command)
    assert command.returncode == 0, err
    said = out.splitlines()
    assert said[0] == ("the tools' sessions on this machine: "
                       f"{tmp_path / '.claude' / 'projects'}, {tmp_path / '.codex' / 'sessions'}")
    nodes = 10 + (await ledger.sessions.get(claude_sid)).node_count
    assert said[-1] == f"the tools' sessions: stopped following (2 sessions, {nodes} nodes)"
    assert err == ""


async def live_nodes(ledger, sid: str, count: int) -> None:
    """Waits until the session holds `count` live nodes (a grown tail replaces some)."""
    for _ in range(600):
        try:
            exported = await export_session(ledger.db, ledger.tenant, sid, ledger.limits)
            if sum(n["properties"].get("deleted_at") is None for n in exported["nodes"]) == count:
                return
        except NotFound:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError(f"the session never held {count} live nodes")


async def test_follow_a_folder_takes_sub_agents_as_they_appear_and_grow(
        neo4j_server, ledger, tmp_path):
    project = tmp_path / "projects" / "-work-app"
    project.mkdir(parents=True)
    (project / "5c1d9e20-agents.jsonl").write_text((AGENTS / "5c1d9e20-agents.jsonl").read_text())
    with following(neo4j_server, ledger.tenant, tmp_path, settle="0.2") as command:
        sid = model.session_id(ledger.tenant, "claude-code", "5c1d9e20-agents")
        source = AGENTS / "5c1d9e20-agents" / "subagents"
        side = project / "5c1d9e20-agents" / "subagents"
        await live_nodes(ledger, sid, 5)  # the session alone
        side.mkdir(parents=True)
        (side / "agent-a1b2.meta.json").write_text((source / "agent-a1b2.meta.json").read_text())
        agent = (source / "agent-a1b2.jsonl").read_text().splitlines(keepends=True)
        (side / "agent-a1b2.jsonl").write_text("".join(agent[:2]) + agent[2][:30])
        await live_nodes(ledger, sid, 6)  # a sub-agent appears (its call waits for its result)
        with (side / "agent-a1b2.jsonl").open("a") as f:
            f.write(agent[2][30:] + "".join(agent[3:]))
        await live_nodes(ledger, sid, 9)  # and grows
        for name in ("agent-c3d4.meta.json", "agent-c3d4.jsonl", "agent-acompact-9f.jsonl"):
            (side / name).write_text((source / name).read_text())
        await live_nodes(ledger, sid, 11)  # as the folder's import holds it
        out, err = stopped(command)
    assert command.returncode == 0, err
    assert err == ""
    assert await ledger.sessions.count() == 1
    await assert_sound(ledger, sid)
    exported = await export_session(ledger.db, ledger.tenant, sid, ledger.limits)
    spawned = [n for n in exported["nodes"] if n["properties"].get("side_branch")
               and n["properties"].get("deleted_at") is None]
    assert len(spawned) == 6 and all(n["caller_id"] for n in spawned)  # attached to it
