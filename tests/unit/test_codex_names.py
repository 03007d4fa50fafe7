"""The names Codex gives its threads (codex_names.py, origin.codex): its home's
`session_index.jsonl`, the newest entry of a thread winning, and a rollout's own
`thread_name_updated` events; a rollout outside a Codex home, or given as text, has none."""
import json
import os
from pathlib import Path

import pytest

from service.transcripts import Beside, beside, codex_names, origin, side_text
from service.transcripts.model import Mode
from service.transcripts.reading import Reading
from service.transcripts.walk import since, transcript_files
from service.model.validate import Limits

THREAD = "019eb2d0-41aa-7c3e-8f10-5a6b7c8d9e01"
OTHER = "019eb2c9-0b7e-7d21-9a44-1f2e3d4c5b6a"
FORK = Path(__file__).parent.parent / "fixtures" / "transcripts" / "codex" / \
    "rollout-2026-06-12T15-20-00-019eb2d0-fork.jsonl"


def entry(thread: str, name: object) -> str:
    return json.dumps({"id": thread, "thread_name": name,
                       "updated_at": "2026-06-12T16:00:00Z"}) + "\n"


def rollout_in(home: Path, thread: str = THREAD, archived: bool = False) -> Path:
    folder = home / "archived_sessions" if archived else home / "sessions" / "2026" / "06" / "12"
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / f"rollout-2026-06-12T15-20-00-{thread}.jsonl"
    file.write_text(FORK.read_text())
    return file


def read(path: str) -> str:
    return Path(path).read_text()


@pytest.mark.parametrize("place, home", [
    ("sessions/2026/06/12", "."), ("archived_sessions", "."),
    ("elsewhere/2026/06/12", None), ("sessions/2026/June/12", None), ("sessions", None)])
def test_the_index_is_the_codex_home_s(tmp_path, place, home):
    file = tmp_path / place / f"rollout-2026-06-12T15-20-00-{THREAD}.jsonl"
    expected = None if home is None else tmp_path / codex_names.INDEX
    assert codex_names.index_of(str(file)) == expected


def test_a_file_not_named_as_a_rollout_has_no_index(tmp_path):
    for name in ("rollout-2026-06-12.jsonl", f"{THREAD}.jsonl", f"rollout-{THREAD}.json"):
        assert codex_names.index_of(str(tmp_path / "sessions/2026/06/12" / name)) is None
    assert codex_names.index_of("-") is None


def test_the_newest_name_of_the_thread_wins_and_other_lines_are_passed_over(tmp_path):
    file = rollout_in(tmp_path)
    (tmp_path / codex_names.INDEX).write_text(
        entry(THREAD, "Kite string") + "not json\n" + json.dumps([THREAD]) + "\n"
        + entry(OTHER, "The parent") + entry(THREAD, "  Kite string,\n measured ")
        + entry(THREAD, "   ") + entry(THREAD, None) + "\n")
    assert codex_names.name_of(str(file), read) == "Kite string,\n measured"
    other = rollout_in(tmp_path, OTHER, archived=True)
    assert codex_names.name_of(str(other), read) == "The parent"
    assert codex_names.name_of(str(rollout_in(tmp_path, "019eb2d0-0000-7000-8000-000000000000")),
                               read) is None
    assert codex_names.name_of(str(file), None) is None  # a text given: nothing beside it


def test_a_name_codex_cannot_read_is_passed_over(tmp_path):
    file = rollout_in(tmp_path)
    (tmp_path / codex_names.INDEX).write_text(
        entry(THREAD, "Kite") + entry(THREAD, "Kite \ud83d"))  # written as JSON spells it
    assert codex_names.name_of(str(file), read) == "Kite"


def test_a_home_without_an_index_or_with_an_unreadable_one_names_nothing(tmp_path):
    file = rollout_in(tmp_path)
    assert codex_names.name_of(str(file), read) is None
    (tmp_path / codex_names.INDEX).write_bytes(b"\xff\xfe not utf-8\n")
    assert codex_names.name_of(str(file), read) is None


def test_a_rename_is_read_though_the_index_was_read_before(tmp_path):
    file = rollout_in(tmp_path)
    index = tmp_path / codex_names.INDEX
    index.write_text(entry(THREAD, "First"))
    assert codex_names.name_of(str(file), read) == "First"
    with index.open("a") as f:
        f.write(entry(THREAD, "Second"))
    assert codex_names.name_of(str(file), read) == "Second"


def test_a_rollout_names_its_own_thread_not_a_parent_s(tmp_path):
    def titled(*events: dict) -> str:
        text = FORK.read_text() + "".join(
            json.dumps({"timestamp": "2026-06-12T15:30:00.000Z", "type": "event_msg",
                        "payload": {"type": "thread_name_updated", **event}}) + "\n"
            for event in events)
        reading = Reading("rollout.jsonl", "codex", "t", Limits())
        reading.feed(text)
        return reading.document(Mode())["session"]["properties"]["title"]

    first_prompt = titled()
    assert titled({"thread_id": OTHER, "thread_name": "The parent's"}) == first_prompt
    assert titled({"thread_id": THREAD, "thread_name": "Kite"},
                  {"thread_id": OTHER, "thread_name": "The parent's"}) == "Kite"
    assert titled({"thread_id": THREAD, "thread_name": "Kite"},
                  {"thread_id": THREAD, "thread_name": "Kite, measured"}) == "Kite, measured"
    assert titled({"thread_id": THREAD, "thread_name": "Kite"},
                  {"thread_id": THREAD}) == first_prompt  # the name taken away


def test_the_index_s_name_comes_before_the_rollout_s_and_the_first_prompt(tmp_path):
    file = rollout_in(tmp_path)
    renamed = json.dumps({"timestamp": "2026-06-12T15:30:00.000Z", "type": "event_msg",
                          "payload": {"type": "thread_name_updated", "thread_id": THREAD,
                                      "thread_name": "From the rollout"}}) + "\n"
    file.write_text(FORK.read_text() + renamed)
    (tmp_path / codex_names.INDEX).write_text(entry(THREAD, "From the index"))
    side = beside(str(file), "codex", read)
    assert side == Beside([], "From the index")
    reading = Reading(str(file), "codex", "t", Limits())
    reading.feed(file.read_text())
    source = reading.document(Mode(), side.agents, None, side.named)["session"]["properties"]
    assert source["title"] == "From the index"
    assert json.loads(source["source"])["title"] == "From the index"
    facts = origin.codex(enumerate(map(json.loads, file.read_text().splitlines())))
    assert facts.title == "From the rollout"


def test_a_name_changes_the_fingerprint_and_no_name_leaves_it_as_it_was():
    assert side_text(Beside([])) == ""
    assert side_text(Beside([], "Kite")) != side_text(Beside([], "Kites"))


def test_since_takes_a_thread_renamed_since_though_its_rollout_is_older(tmp_path):
    renamed, untouched, unnamed = (rollout_in(tmp_path, thread) for thread in (
        THREAD, OTHER, "019eb2aa-0000-7000-8000-000000000000"))
    for file in (renamed, untouched, unnamed):
        os.utime(file, (1_700_000_000, 1_700_000_000))  # November 2023
    index = tmp_path / codex_names.INDEX
    index.write_text(
        json.dumps({"id": OTHER, "thread_name": "Old", "updated_at": "2023-11-20T00:00:00Z"})
        + "\n" + json.dumps({"id": THREAD, "thread_name": "New",
                             "updated_at": "2026-06-12T16:00:00.123456789Z"}) + "\n")
    found = transcript_files([str(tmp_path)], since("2024-01-01"))
    assert (found.files, found.older) == ([str(renamed)], 2)
    # An entry without a time it gives counts from when the index was last written.
    index.write_text(json.dumps({"id": OTHER, "thread_name": "Later"}) + "\n")
    assert transcript_files([str(tmp_path)], since("2024-01-01")).files == [str(untouched)]
    os.utime(index, (1_700_000_000, 1_700_000_000))
    assert transcript_files([str(tmp_path)], since("2024-01-01")).files == []
