"""A large file's first import sets its turns' long strings aside on disk while it plans
its document (service/transcripts/spill.py): the rows it builds are the rows of the file
read with every string in memory, for every fixture of every format, and its parse is let
go once its document is planned."""
import copy
import pickle
from pathlib import Path

import pytest

from service.model.validate import Limits
from service.transcripts import detect, spill, streamed
from service.transcripts.model import Mode
from service.transcripts.spill import Spill, Spilled, restored
from tests.transcript_trees import FIXTURES, tool_homes
from service.transcripts.walk import transcript_files

LIMITS = Limits()


def _read_text(file: str) -> str:
    return Path(file).read_text(encoding="utf-8")


def read(file: str, set_aside: bool) -> streamed.Streamed:
    tool = detect(_read_text(file), file, False)
    return streamed.read(file, tool, "tenant", LIMITS, Mode(), _read_text, spill=set_aside)


def rows_and_header(planned: streamed.Streamed):
    return planned.rows(0, planned.size), planned.header()


def set_aside_in(planned: streamed.Streamed) -> int:
    found = 0

    def walk(value) -> None:
        nonlocal found
        if isinstance(value, Spilled):
            found += 1
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item)

    for turn in planned.plan.transcript.turns:
        walk(turn.blocks)
    return found


def session_files(tmp_path: Path) -> list[str]:
    homes = [str(home) for home in tool_homes(tmp_path / "tool-homes").values()]
    return transcript_files(homes).files


def test_every_fixture_read_with_its_strings_set_aside_builds_the_same_rows(
        tmp_path, monkeypatch):
    monkeypatch.setattr(spill, "SPILL_FROM_CHARS", 0)  # every string a block holds
    files = session_files(tmp_path)
    assert len(files) >= 19
    for file in files:
        whole, aside = read(file, False), read(file, True)
        assert set_aside_in(whole) == 0
        assert set_aside_in(aside) > 0, file
        assert aside.reading is None and whole.reading is not None  # its parse let go
        assert rows_and_header(aside) == rows_and_header(whole), file
        assert aside.imported == whole.imported and aside.read_as == whole.read_as


def test_only_long_strings_are_set_aside_and_ids_and_types_never():
    aside = Spill(least=4)
    blocks = [{"type": "tool_use", "id": "toolu_long_enough", "name": "a_long_name",
               "input": {"path": "abc", "content": "long text", "nested": [{"type": "xyzw"}]}},
              {"type": "text", "text": "ab\ud800cd"}]  # JSON may hold a lone surrogate
    aside.set_aside(blocks)
    use, text = blocks
    assert (use["type"], use["id"], use["name"], use["input"]["path"]) == \
        ("tool_use", "toolu_long_enough", "a_long_name", "abc")
    assert isinstance(use["input"]["content"], Spilled)
    assert isinstance(use["input"]["nested"][0]["type"], Spilled)  # a type only at the top
    assert isinstance(text["text"], Spilled)
    back = restored(blocks)
    assert back == [{"type": "tool_use", "id": "toolu_long_enough", "name": "a_long_name",
                     "input": {"path": "abc", "content": "long text",
                               "nested": [{"type": "xyzw"}]}},
                    {"type": "text", "text": "ab\ud800cd"}]
    plain = {"type": "text", "text": "x"}
    assert restored(plain) is plain  # nothing set aside: nothing copied
    # A copy shares what was set aside; a pickle (a kept reading) holds the string.
    assert copy.deepcopy(text)["text"] is text["text"]
    assert pickle.loads(pickle.dumps(text)) == {"type": "text", "text": "ab\ud800cd"}


@pytest.mark.parametrize("fixture", sorted((FIXTURES / "claude_code").glob("*.jsonl"))[:1])
def test_a_title_from_a_first_prompt_set_aside_is_read_back(fixture, monkeypatch):
    monkeypatch.setattr(spill, "SPILL_FROM_CHARS", 0)
    aside, whole = read(str(fixture), True), read(str(fixture), False)
    title = whole.header()["session"]["properties"].get("title")
    assert title and aside.header()["session"]["properties"].get("title") == title


def test_a_disk_that_fills_up_leaves_the_rest_of_the_strings_in_memory(monkeypatch):
    aside = Spill(least=1)
    first, second = {"type": "text", "text": "written"}, {"type": "text", "text": "kept"}
    aside.set_aside([first])

    class Full:
        def __init__(self, file):
            self.file = file

        def write(self, data):
            raise OSError(28, "No space left on device")

        def __getattr__(self, name):
            return getattr(self.file, name)

    monkeypatch.setattr(aside, "_file", Full(aside._file))
    aside.set_aside([second])
    assert isinstance(first["text"], Spilled) and second["text"] == "kept"
    assert restored([first, second]) == [{"type": "text", "text": "written"},
                                         {"type": "text", "text": "kept"}]
    # No temporary file at all: the file is read with its strings in memory.
    def no_room(**_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spill.tempfile, "TemporaryFile", no_room)
    assert spill.opened() is None
