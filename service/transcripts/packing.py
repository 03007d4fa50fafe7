"""How a kept reading (kept.py) is written to its shelf and read back: pickled and
squeezed a frame at a time, never held whole as bytes, and each Spill its turns were set
aside in (spill.py) named by a copy of all it holds, kept beside the reading's file as
`<the reading's name>.<token>.aside`. A copy is written once, before any reading names it,
and never changed: a reading loaded reads its turns from the copies it names, each opened
once and checked to be the one it made (this user's, of its size).
"""
from __future__ import annotations

import io
import os
import pickle
import re
import secrets
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Iterable

from .spill import Spill

COPY = ".aside"
_COPY_NAME = re.compile(r"[0-9a-f]{64}\.[0-9a-f]{32}" + re.escape(COPY))
_READ_BYTES = 1 << 16


class Copies:
    """The copies of set-aside turns beside the reading named `stem` in `folder`, as one
    packing of it names them: made as the packing needs them, then settled."""

    def __init__(self, folder: Path, stem: str) -> None:
        self.folder, self.stem = folder, stem
        self._named: dict[int, tuple[Spill, tuple[str, str, int]]] = {}
        self._made: list[str] = []  # by this packing

    def name_of(self, spill: Spill) -> tuple[str, str, int]:
        """The persistent id naming the copy of all `spill` holds, made if there is none
        (the same tuple each time: a pickle holds on to each object it packs)."""
        named = self._named.get(id(spill))
        if named is None:
            copy = spill.copy
            if copy is None or copy[1] != spill.end or not (self.folder / copy[0]).exists():
                copy = self._made_of(spill)
            named = self._named[id(spill)] = (spill, ("aside", *copy))
        return named[1]

    def _made_of(self, spill: Spill) -> tuple[str, int]:
        name = f"{self.stem}.{secrets.token_hex(16)}{COPY}"
        self._made.append(name)
        with os.fdopen(os.open(self.folder / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                               0o600), "wb") as f:
            spill.copy_into(f)
        return name, spill.end

    def settle(self, kept: bool) -> None:
        """Once the reading is `kept`: each Spill knows its copy, and the reading's copies
        it no longer names are removed. Not kept: the copies made for it are removed."""
        if not kept:
            _removed(self.folder / name for name in self._made)
            return
        named = set()
        for spill, (_, name, size) in self._named.values():
            spill.copy = (name, size)
            named.add(name)
        _removed(copy for copy in copies_of(self.folder, self.stem) if copy.name not in named)


def _removed(paths: Iterable[Path]) -> None:
    """Removed as far as they can be: a copy left behind only takes room until trimmed."""
    for path in paths:
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass


def copies_of(folder: Path, stem: str) -> list[Path]:
    """The copies kept beside the reading named `stem`."""
    try:
        return [path for path in folder.iterdir()
                if path.name.startswith(stem + ".") and path.name.endswith(COPY)]
    except OSError:
        return []


def pack_into(obj: Any, f: BinaryIO, copies: Copies) -> None:
    """`obj` pickled and squeezed into `f`, a frame at a time, its Spills named by `copies`."""
    squeeze = zlib.compressobj(1)

    class Squeezed:
        def write(self, data: bytes) -> int:
            f.write(squeeze.compress(data))
            return len(data)

    _Packer(Squeezed(), copies).dump(obj)
    f.write(squeeze.flush())


def packed(obj: Any) -> bytes:
    """`obj` pickled and squeezed whole; PicklingError if it holds a Spill (only
    `pack_into` keeps those, with their copies)."""
    body = io.BytesIO()
    _Packer(body, None).dump(obj)
    return zlib.compress(body.getvalue(), 1)


def unpack(f: BinaryIO, folder: Path, stem: str) -> Any:
    """What `pack_into` wrote to `f` (the reading named `stem` in `folder`), its copies
    opened."""
    return _Unpacker(_Unsqueezed(f), folder, stem).load()


def private(stat: os.stat_result) -> bool:
    """Whether a kept file is this user's and nobody else can write it."""
    return stat.st_uid == os.getuid() and not stat.st_mode & 0o022


class _Packer(pickle.Pickler):
    def __init__(self, f: Any, copies: Copies | None) -> None:
        super().__init__(f, protocol=pickle.HIGHEST_PROTOCOL)
        self._copies = copies

    def persistent_id(self, obj: Any) -> Any:
        if not isinstance(obj, Spill):
            return None
        if self._copies is None:
            raise pickle.PicklingError("turns set aside are kept only beside their reading")
        return self._copies.name_of(obj)


class _Unpacker(pickle.Unpickler):
    def __init__(self, f: Any, folder: Path, stem: str) -> None:
        super().__init__(f)
        self._folder, self._stem = folder, stem
        self._spills: dict[str, Spill] = {}

    def persistent_load(self, pid: Any) -> Spill:
        kind, name, size = pid
        if kind != "aside" or not _COPY_NAME.fullmatch(name) or \
                not name.startswith(self._stem + "."):
            raise pickle.UnpicklingError(f"not a copy of this reading's: {name!r}")
        spill = self._spills.get(name)
        if spill is None:
            f = (self._folder / name).open("rb")
            stat = os.fstat(f.fileno())
            if not private(stat) or stat.st_size != size:
                f.close()
                raise pickle.UnpicklingError(f"{name} is not the copy this reading made")
            spill = self._spills[name] = Spill.loaded(f, name, size)
        return spill


class _Unsqueezed:
    """A squeezed pickle, unsqueezed as the unpickler reads it."""

    def __init__(self, f: BinaryIO) -> None:
        self._f, self._unsqueeze, self._held = f, zlib.decompressobj(), bytearray()

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._held) < size:
            if not self._more():
                break
        size = len(self._held) if size < 0 else min(size, len(self._held))
        data = bytes(self._held[:size])
        del self._held[:size]
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def readline(self) -> bytes:
        while b"\n" not in self._held and self._more():
            pass
        end = self._held.find(b"\n") + 1 or len(self._held)
        return self.read(end)

    def _more(self) -> bool:
        if self._unsqueeze.eof:
            return False
        data = self._f.read(_READ_BYTES)
        self._held += self._unsqueeze.decompress(data) if data else self._unsqueeze.flush()
        if not data and not self._unsqueeze.eof:
            raise zlib.error("the kept reading ends early")
        return True
