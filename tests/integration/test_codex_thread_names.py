"""A Codex thread imported under the name Codex gives it (codex_names.py): its home's
`session_index.jsonl` read with the rollout, whether the rollout is read whole, a part at
a time, or followed; a rename alone is a change the next import takes (the rollout
unchanged), and a title the user set stays."""
import json
from pathlib import Path

import pytest

from service.transcripts import codex_names, model, streamed
from service.transcripts.follow import Follower
from tests.integration.helpers import assert_sound, run_command, runtime_for

THREAD = "019eb2d0-41aa-7c3e-8f10-5a6b7c8d9e01"
FORK = Path(__file__).parent.parent / "fixtures" / "transcripts" / "codex" / \
    "rollout-2026-06-12T15-20-00-019eb2d0-fork.jsonl"
FIRST_PROMPT = "Which file sets the kite's string length?"


def codex_home(root: Path) -> tuple[Path, Path]:
    """A Codex home holding one rollout named as Codex names it; (its rollout, its index)."""
    day = root / ".codex" / "sessions" / "2026" / "06" / "12"
    day.mkdir(parents=True)
    rollout = day / f"rollout-2026-06-12T15-20-00-{THREAD}.jsonl"
    rollout.write_text(FORK.read_text())
    return rollout, root / ".codex" / codex_names.INDEX


def name(index: Path, thread: str, title: str) -> None:
    with index.open("a") as f:
        f.write(json.dumps({"id": thread, "thread_name": title,
                            "updated_at": "2026-06-12T16:00:00Z"}) + "\n")


async def imported(ledger, capsys, path: Path) -> str:
    capsys.readouterr()
    status = await run_command(runtime_for(ledger.db, ledger.tenant), "import-transcript",
                               str(path))
    said = capsys.readouterr()
    assert status == 0, said.err
    return said.out.splitlines()[-1]


@pytest.mark.parametrize("in_parts", [False, True], ids=["whole", "in parts"])
async def test_a_thread_is_titled_by_its_name_and_renamed_with_it(ledger, capsys, tmp_path,
                                                                   monkeypatch, in_parts):
    if in_parts:
        monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", 0)
    rollout, index = codex_home(tmp_path)
    name(index, "019eb2c9-0b7e-7d21-9a44-1f2e3d4c5b6a", "The parent thread")
    name(index, THREAD, "Kite string")
    assert (await imported(ledger, capsys, tmp_path / ".codex")).startswith(
        "1 file: 1 new, 0 grown, 0 unchanged")
    sid = model.session_id(ledger.tenant, "codex", THREAD)
    assert (await ledger.sessions.get(sid)).title == "Kite string"
    assert (await imported(ledger, capsys, rollout)).startswith(
        "1 file: 0 new, 0 grown, 1 unchanged")

    name(index, THREAD, "Kite string, measured")  # renamed in Codex: the rollout unchanged
    capsys.readouterr()
    assert await run_command(runtime_for(ledger.db, ledger.tenant), "import-transcript",
                             str(rollout)) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{rollout}: session {sid} gained no nodes; its title or source changed",
        "1 file: 0 new, 1 grown, 0 unchanged"]
    assert (await ledger.sessions.get(sid)).title == "Kite string, measured"
    assert (await imported(ledger, capsys, rollout)).startswith(
        "1 file: 0 new, 0 grown, 1 unchanged")

    await ledger.sessions.update(sid, title="Mine", set_title=True)
    name(index, THREAD, "Kites")
    await imported(ledger, capsys, rollout)
    assert (await ledger.sessions.get(sid)).title == "Mine"  # the user's title stays
    await assert_sound(ledger, sid)


async def test_a_rollout_outside_a_codex_home_keeps_its_first_prompt(ledger, capsys, tmp_path):
    rollout, index = codex_home(tmp_path)
    name(index, THREAD, "Kite string")
    elsewhere = tmp_path / rollout.name
    elsewhere.write_text(rollout.read_text())
    await imported(ledger, capsys, elsewhere)
    sid = model.session_id(ledger.tenant, "codex", THREAD)
    assert (await ledger.sessions.get(sid)).title == FIRST_PROMPT


@pytest.mark.parametrize("in_parts", [False, True], ids=["whole", "in parts"])
async def test_a_followed_thread_is_renamed_as_codex_renames_it(ledger, tmp_path, monkeypatch,
                                                               in_parts):
    from service.transcripts import follow
    monkeypatch.setattr(follow, "STREAM_FROM_BYTES", 0 if in_parts else 1 << 40)
    rollout, index = codex_home(tmp_path)
    follower = Follower(ledger, str(rollout), None, False)
    first = await follower.poll(0.0)
    assert first is not None and first.created
    sid = first.session_id
    settled = [await follower.poll(0.0) for _ in range(3)]  # its tail, once quiet
    assert settled[-1] is None
    assert (await ledger.sessions.get(sid)).title == FIRST_PROMPT
    name(index, THREAD, "Kite string")
    renamed = await follower.poll(0.0)
    assert renamed is not None
    assert (await ledger.sessions.get(sid)).title == "Kite string"
    assert await follower.poll(0.0) is None
    await assert_sound(ledger, sid)
