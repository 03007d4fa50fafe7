"""The long texts of a large file's turns set aside on disk while its document is planned,
so that a first import in parts holds the file's structure, not its words
(streamed.py): each text block's, tool call's or result's string of SPILL_FROM_CHARS or
more is written to a temporary file once every line of a part is parsed, and its place in
the block holds a `Spilled` naming where it went. The rows are built from the blocks
`restored` (document.py), a part at a time.

Only what reads a turn's words after its lines are parsed sees a Spilled (document.py's
rows, origin.py's first prompt, through `text_of`); a parser reads the blocks it makes
while it takes their line, before they are set aside, and looks at the others' types and
ids only (which are never set aside). A string left in place is read as it is: what is set
aside only saves memory.
"""
from __future__ import annotations

import os
import tempfile
from typing import Any, Iterable

# Shorter strings cost less in memory than their place on disk.
SPILL_FROM_CHARS = 256
# Keys a parser or the layout reads after the line that made the block.
_KEPT_KEYS = frozenset({"type", "id", "tool_use_id", "name", "media_type"})


class Spilled:
    """A string set aside: `text()` reads it back."""

    __slots__ = ("_spill", "_offset", "_size")

    def __init__(self, spill: Spill, offset: int, size: int) -> None:
        self._spill, self._offset, self._size = spill, offset, size

    def text(self) -> str:
        return self._spill.read(self._offset, self._size)

    def __deepcopy__(self, memo: dict[int, Any]) -> Spilled:
        return self  # as a string is

    def __reduce__(self) -> Any:  # a kept reading holds the string again
        return str, (self.text(),)


class Spill:
    """The temporary file the strings of one file's read are set aside in (unlinked from
    the start: gone once collected, or the process ends however it ends)."""

    def __init__(self, least: int | None = None) -> None:
        """OSError when no temporary file can be made."""
        self.least = SPILL_FROM_CHARS if least is None else least
        self._file = tempfile.TemporaryFile(prefix="ctxdag-spill-")
        self._end = 0
        self._unflushed = False
        self._full = False  # a write failed (a full disk): the strings stay in memory

    def set_aside(self, blocks: Iterable[dict[str, Any]]) -> None:
        """Each long string in `blocks` (nested in theirs too) replaced in place by a
        Spilled."""
        for block in blocks:
            self._walk(block, top=True)

    def _walk(self, value: dict[str, Any] | list[Any], top: bool = False) -> None:
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(item, str):
                if len(item) >= self.least and not (top and key in _KEPT_KEYS):
                    value[key] = self._written(item)  # type: ignore[index]
            elif isinstance(item, (dict, list)):
                self._walk(item)

    def _written(self, text: str) -> Spilled | str:
        if self._full:
            return text
        data = text.encode("utf-8", "surrogatepass")  # JSON may hold lone surrogates
        try:
            self._file.write(data)
        except OSError:
            self._full = True  # what was written is read back; the rest stays in memory
            return text
        self._unflushed = True
        spilled = Spilled(self, self._end, len(data))
        self._end += len(data)
        return spilled

    def read(self, offset: int, size: int) -> str:
        if self._unflushed:
            self._file.flush()
            self._unflushed = False
        return os.pread(self._file.fileno(), size, offset).decode("utf-8", "surrogatepass")


def opened() -> Spill | None:
    """A Spill, or None when no temporary file can be made (the strings stay in memory)."""
    try:
        return Spill()
    except OSError:
        return None


def restored(value: Any) -> Any:
    """`value` (a block, or any part of one) with what was set aside read back: a copy
    where something was, `value` itself where nothing was."""
    if isinstance(value, Spilled):
        return value.text()
    if isinstance(value, dict):
        items = {key: restored(item) for key, item in value.items()}
        return value if all(items[key] is item for key, item in value.items()) else items
    if isinstance(value, list):
        listed = [restored(item) for item in value]
        return value if all(a is b for a, b in zip(listed, value)) else listed
    return value


def text_of(value: Any) -> Any:
    """A string that may have been set aside, read back (anything else as it is)."""
    return value.text() if isinstance(value, Spilled) else value
