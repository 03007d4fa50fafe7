"""A transcript file's lines: one JSON object each, numbered from 1."""
from __future__ import annotations

from typing import Any, Iterator

from ..errors import BadInput
from ..model import validate
from .model import bad_line


def objects(text: str, file: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line; BadInput naming the line for one that is
    not a JSON object with a string `type`."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = validate.parse_json(line, "the line")
        except BadInput as e:
            raise bad_line(file, number, e.message) from None
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            raise bad_line(file, number, "not a JSON object with a string \"type\"")
        yield number, value
