"""A transcript's lines are read one at a time, as str.splitlines() cuts them: detecting a
file's format reads its first line, not the whole file."""
import itertools

from service.transcripts import detect
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
