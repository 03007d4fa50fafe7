"""A transcript file's lines: one JSON object each, numbered from 1."""
from __future__ import annotations

from typing import Any, Iterator

from ..errors import BadInput
from ..model import validate
from .model import DegradedKind, Mode


def objects(text: str, file: str, mode: Mode) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line; a line that is not a JSON object with a
    string `type` is skipped and degraded (under a strict `mode`: BadInput naming it)."""
    for number, line in enumerate(text.splitlines(), start=1):
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
