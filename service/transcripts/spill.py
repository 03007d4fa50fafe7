"""The turns of a large file's first import set aside on disk while it is read and planned
(streamed.py), so that the import holds the file's structure, not its words: once a part's
lines are parsed, each turn its next lines are unlikely to change has its blocks and
metadata written to a temporary file (`set_aside`), and holds an `Aside` naming where they
went in their place.

A reading kept for the file's next import (kept.py) keeps what its turns set aside beside
it: the shelf copies the temporary file into one of its own (`copy_into`, packing.py), and
the Spill loaded with the reading reads from that copy (`Spill.loaded`), never writing to
it.

What is set aside is read back wherever it is read, so it only saves memory:
- a Building (building.py) a parser reads again takes its blocks and metadata back for good,
  as the parser may change them;
- a Turn made of a Building set aside (building.turns_of) reads them back each time they
  are read, and holds none (the plan reads a turn's blocks a few times, its row once).
"""
from __future__ import annotations

import marshal
import os
import tempfile
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from .building import Building

# Bytes in a format only this process reads back: marshal writes and reads JSON's values
# (lone surrogates included) several times faster than pickle.
_MARSHAL_VERSION = 4
_COPY_BYTES = 1 << 20


class Aside:
    """A turn's blocks and metadata set aside: `load()` reads them back, new objects each
    time."""

    __slots__ = ("_spill", "_offset", "_size")

    def __init__(self, spill: Spill, offset: int, size: int) -> None:
        self._spill, self._offset, self._size = spill, offset, size

    def load(self) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        blocks, meta = marshal.loads(self._spill.read(self._offset, self._size))
        return blocks, meta

    def __deepcopy__(self, memo: dict[int, Any]) -> Aside:
        return self  # what it names never changes

    def __reduce__(self) -> tuple[Any, ...]:
        return Aside, (self._spill, self._offset, self._size)


class Spill:
    """The temporary file one file's turns are set aside in (unlinked from the start: gone
    once collected, or the process ends however it ends), or a kept reading's copy of one,
    which is only read."""

    def __init__(self, file: BinaryIO | None = None, end: int = 0) -> None:
        """OSError when no temporary file can be made."""
        self._file = file if file is not None else \
            tempfile.TemporaryFile(prefix="ctxdag-spill-")
        self._end = end
        self._unflushed = False
        self._full = False  # a write failed (a full disk): the turns stay in memory
        self.read_only = file is not None
        # The shelf's copy of it (packing.py): its name, and how many bytes it holds.
        self.copy: tuple[str, int] | None = None

    @classmethod
    def loaded(cls, file: BinaryIO, name: str, size: int) -> Spill:
        """The shelf's copy `name` of a Spill (`file`, opened to read, holding `size`
        bytes), read as the Spill was."""
        spill = cls(file, size)
        spill.copy = (name, size)
        return spill

    @property
    def end(self) -> int:
        """How many bytes were set aside in it."""
        return self._end

    def set_aside(self, building: Building) -> None:
        """The turn's blocks and metadata written aside, and let go (unless they are set
        aside already, hold a value marshal does not write, or the disk is full)."""
        if self._full or self.read_only or building.aside is not None:
            return
        try:
            data = marshal.dumps((building.blocks, building.meta), _MARSHAL_VERSION)
        except ValueError:
            return  # not a JSON value: it stays in memory
        try:
            self._file.write(data)
        except OSError:
            self._full = True  # what was written is read back; the rest stays in memory
            return
        self._unflushed = True
        building.aside = Aside(self, self._end, len(data))
        self._end += len(data)
        del building.blocks, building.meta

    def read(self, offset: int, size: int) -> bytes:
        self._flushed()
        return os.pread(self._file.fileno(), size, offset)

    def copy_into(self, f: BinaryIO) -> None:
        """All it holds, written to `f`."""
        self._flushed()
        offset = 0
        while offset < self._end:
            data = os.pread(self._file.fileno(), min(_COPY_BYTES, self._end - offset), offset)
            if not data:
                raise OSError(f"the set-aside file ends at {offset} of {self._end} bytes")
            f.write(data)
            offset += len(data)

    def _flushed(self) -> None:
        if self._unflushed:
            self._file.flush()
            self._unflushed = False


def opened() -> Spill | None:
    """A Spill, or None when no temporary file can be made (the turns stay in memory)."""
    try:
        return Spill()
    except OSError:
        return None
