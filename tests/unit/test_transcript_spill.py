"""A large file's first import sets its turns aside on disk while it reads and plans its
document (service/transcripts/spill.py): the rows it builds are the rows of the file read
with every turn in memory, for every fixture of every format, and its parse is let go once
its document is planned."""
import copy
from datetime import datetime, timezone
from pathlib import Path

import pytest

from service.model.validate import Limits
from service.transcripts import detect, jsonl, reading, spill, streamed
from service.transcripts.building import Building, turns_of
from service.transcripts.model import Mode
from service.transcripts.spill import Spill
from tests.transcript_trees import FIXTURES, tool_homes
from service.transcripts.walk import transcript_files

LIMITS = Limits()
AT = datetime(2026, 1, 2, tzinfo=timezone.utc)


def _read_text(file: str) -> str:
    return Path(file).read_text(encoding="utf-8")


def read(file: str, set_aside: bool) -> streamed.Streamed:
    tool = detect(_read_text(file), file, False)
    return streamed.read(file, tool, "tenant", LIMITS, Mode(), _read_text, spill=set_aside,
                         keep=not set_aside)


def rows_and_header(planned: streamed.Streamed):
    return planned.rows(0, planned.size), planned.header()


def set_aside_in(planned: streamed.Streamed) -> int:
    return sum(turn.aside is not None for turn in planned.plan.transcript.turns)


def session_files(tmp_path: Path) -> list[str]:
    homes = [str(home) for home in tool_homes(tmp_path / "tool-homes").values()]
    return transcript_files(homes).files


@pytest.mark.parametrize("part_characters", [jsonl.PART_CHARACTERS, 1])
def test_every_fixture_read_with_its_turns_set_aside_builds_the_same_rows(
        tmp_path, monkeypatch, part_characters):
    """Every turn set aside once a part is parsed: at the file's end, or (parts of a line)
    after each line, so the next lines read back and change the turns they add to."""
    monkeypatch.setattr(reading, "LIVE_TURNS", 0)
    files = session_files(tmp_path)
    assert len(files) >= 19
    wholes = {file: read(file, False) for file in files}
    monkeypatch.setattr(jsonl, "PART_CHARACTERS", part_characters)
    for file in files:
        whole, aside = wholes[file], read(file, True)
        assert set_aside_in(whole) == 0
        assert set_aside_in(aside) > 0, file
        assert aside.reading is None and whole.reading is not None  # its parse let go
        assert rows_and_header(aside) == rows_and_header(whole), file
        assert aside.imported == whole.imported and aside.read_as == whole.read_as


def building(blocks, meta) -> Building:
    return Building("assistant", -1, 1, AT, None, blocks, ["e1"], meta)


def test_a_building_set_aside_is_taken_back_for_good_when_read_and_its_turn_reads_it_back():
    aside = Spill()
    blocks = [{"type": "text", "text": "ab\ud800cd"},  # JSON may hold a lone surrogate
              {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"n": [1, 2.5]}}]
    b = building(copy.deepcopy(blocks), {"usage": {"input_tokens": 3}})
    aside.set_aside(b)
    assert b.aside is not None
    (turn,) = turns_of([b])
    assert turn.aside is b.aside
    assert turn.blocks == tuple(blocks) and turn.meta == {"usage": {"input_tokens": 3}}
    assert turn.blocks is not turn.blocks  # read back each time: held nowhere
    # A parser reading it again takes it back, and what it changes is kept.
    b.blocks.append({"type": "text", "text": "more"})
    assert b.aside is None and len(b.blocks) == 3
    aside.set_aside(b)
    assert b.meta == {"usage": {"input_tokens": 3}} and len(b.blocks) == 3
    # The Turn made before still reads what it was made of.
    assert turn.blocks == tuple(blocks)
    assert copy.deepcopy(b).blocks == b.blocks


def test_what_marshal_cannot_write_stays_in_memory():
    aside = Spill()
    b = building([{"type": "text", "text": "x"}], {"at": AT})  # not a JSON value
    aside.set_aside(b)
    assert b.aside is None and b.meta == {"at": AT}


@pytest.mark.parametrize("fixture", sorted((FIXTURES / "claude_code").glob("*.jsonl"))[:1])
def test_a_title_from_a_first_prompt_set_aside_is_read_back(fixture, monkeypatch):
    monkeypatch.setattr(reading, "LIVE_TURNS", 0)
    aside, whole = read(str(fixture), True), read(str(fixture), False)
    assert set_aside_in(aside) > 0
    title = whole.header()["session"]["properties"].get("title")
    assert title and aside.header()["session"]["properties"].get("title") == title


def test_a_disk_that_fills_up_leaves_the_rest_of_the_turns_in_memory(monkeypatch):
    aside = Spill()
    first = building([{"type": "text", "text": "written"}], {})
    second = building([{"type": "text", "text": "kept"}], {})
    aside.set_aside(first)

    class Full:
        def __init__(self, file):
            self.file = file

        def write(self, data):
            raise OSError(28, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.file, name)

    monkeypatch.setattr(aside, "_file", Full(aside._file))
    aside.set_aside(second)
    assert first.aside is not None and second.aside is None
    assert [t.blocks for t in turns_of([first, second])] == \
        [({"type": "text", "text": "written"},), ({"type": "text", "text": "kept"},)]
    # No temporary file at all: the file is read with its turns in memory.
    def no_room(**_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spill.tempfile, "TemporaryFile", no_room)
    assert spill.opened() is None
