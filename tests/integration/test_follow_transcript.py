"""`ctxdag import-transcript --follow FILE`, run as a user runs it, while the test appends
to the file as Codex would: the session grows with each complete line, a partial line
waits, a turn still growing is held back, and SIGTERM stops it with one line."""
import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from service.errors import NotFound
from service.transcripts import model
from tests.integration.helpers import assert_sound

CODEX = Path(__file__).parent.parent / "fixtures" / "transcripts" / "codex" / \
    "rollout-2025-09-14T08-00-00-0199a1b2-codex.jsonl"
SESSION = "0199a1b2-codex"


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
    env = {**os.environ, "NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password, "CTXDAG_TENANT": ledger.tenant}
    command = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "import-transcript", "--follow", str(rollout),
         "--poll", "0.1", "--settle", "3600"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sid = model.session_id(ledger.tenant, "codex", SESSION)

    def grow_to(last: int) -> None:
        """Appends what the file lacks of lines 1..`last`."""
        held, whole = rollout.read_text(), "".join(lines[:last])
        with rollout.open("a") as f:
            f.write(whole[len(held):])

    try:
        await node_count(ledger, sid, 4)  # ROOT, the developer, context and user messages
        grow_to(13)  # the rest of line 8 .. line 13: parallel calls, outputs, a reply
        await node_count(ledger, sid, 6)  # the reply, at the end, may still grow: held
        grow_to(20)  # the next user turn, a patch and its output, a reply
        await node_count(ledger, sid, 10)
        command.send_signal(signal.SIGTERM)
        out, err = command.communicate(timeout=60)
    finally:
        if command.poll() is None:
            command.kill()
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
