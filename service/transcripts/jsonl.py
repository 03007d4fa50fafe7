"""A transcript file's lines: one JSON object each, numbered from 1."""
from __future__ import annotations

from typing import Any, Iterator

from ..errors import BadInput
from ..model import validate
from .model import DegradedKind, Mode


def utf8(data: bytes, file: str, offset: int = 0) -> str:
    """`data` (bytes of `file` from `offset`) as text; BadInput naming the first byte that
    is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInput(f"{file} is not UTF-8 text (invalid byte at offset "
                       f"{offset + e.start})") from None


def objects(text: str, file: str, mode: Mode,
            start: int = 1) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line, numbered from `start` (the lines a file
    gained, after those read before); a line that is not a JSON object with a string
    `type` is skipped and degraded (under a strict `mode`: BadInput naming it)."""
    for number, line in enumerate(_lines(text), start=start):
        if not line.strip():
            continue
        try:
            value = validate.parse_json(line, "the line")
        except BadInput as e:
            mode.degrade(file, number, DegradedKind.MALFORMED_LINE, e.message)
            continue
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            mode.degrade(file, number, DegradedKind.MALFORMED_LINE,
                         "not a JSON object with a string \"type\"")
            continue
        yield number, value


# What a part of a text is read as at most, to a line's end (text_parts).
PART_CHARACTERS = 1 << 20


def text_parts(text: str) -> Iterator[str]:
    """`text` in parts of about PART_CHARACTERS characters, each ending at a line's end (the
    last, at the text's end): read one after another, they number their lines as the text
    read at once does."""
    start = 0
    while start < len(text):
        end = text.find("\n", start + PART_CHARACTERS)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def line_count(text: str) -> int:
    """How many lines `objects` numbers in `text` (blank ones too): text ending at a line's
    end, followed by more, numbers them from this count + 1."""
    return sum(1 for _ in _lines(text))


def _lines(text: str) -> Iterator[str]:
    """text.splitlines(), one line at a time: a reader that stops early (a format's
    detection, at the first object) reads no further. Lines end at each newline, and
    within one at whatever else splitlines ends a line at."""
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        line = text[start:end]
        yield from line.splitlines()
        if end < len(text) and (not line or line[-1] in _ENDS_BEFORE_NEWLINE):
            # a line ends before this newline: the newline ends an empty one
            yield ""
        start = end + 1


# What splitlines ends a line at but a newline ("\r\n" is one end, so "\r" is not here).
_ENDS_BEFORE_NEWLINE = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
