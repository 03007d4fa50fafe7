"""A transcript's lines are read one at a time, as str.splitlines() cuts them: detecting a
file's format reads its first line, not the whole file."""
import itertools

import pytest

from service.transcripts import detect
from service.transcripts.model import NotATranscript
from service.transcripts.jsonl import _lines

ENDS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def test_lines_are_cut_as_splitlines_cuts_them():
    for size in range(6):
        for chars in itertools.product("a" + ENDS, repeat=size):
            text = "".join(chars)
            assert list(_lines(text)) == text.splitlines(), repr(text)


def test_detection_reads_no_line_after_the_first_object():
    class FirstLineOnly(str):
        def splitlines(self, *args):
            raise AssertionError("the whole file was cut into lines")

        def find(self, sub, start=0, *args):
            assert start == 0, "read past the first line"
            return str.find(self, sub, start, *args)

    text = FirstLineOnly('{"type": "session", "version": 3, "id": "x", "timestamp": 1}\n'
                         + "not json\n" * 3)
    assert detect(text, "f.jsonl") == "pi"


def test_a_file_of_lines_none_of_them_an_entry_is_not_called_empty():
    with pytest.raises(NotATranscript) as blank:
        detect("\n  \n\n", "blank.jsonl")
    assert blank.value.message == "blank.jsonl:1: the file is empty"
    with pytest.raises(NotATranscript) as cut:
        detect('\n{"type": "user"', "cut.jsonl")  # a first line cut short
    assert cut.value.message.startswith(
        'cut.jsonl:1: no line of it is a JSON object with a string "type" (line 2: the line '
        "is not valid JSON")
    with pytest.raises(NotATranscript) as listed:
        detect("[1, 2]\n", "list.jsonl")
    assert listed.value.message == ('list.jsonl:1: no line of it is a JSON object with a '
                                    'string "type" (line 1: not a JSON object with a string '
                                    '"type")')
