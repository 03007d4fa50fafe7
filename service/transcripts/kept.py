"""What an import (`ctxdag import-transcript PATH…` and importTranscript, batch.py) keeps of
a file likely to grow, so that its next import of that file reads on from where this one
stopped, as a follower does (follow.py) within one process: the Reading (reading.py: the
parse, the rows its document built) and what the import stored (store.transcripts.Known),
with how many bytes of the file were read and their sha256.

A session file that grew, or that its tool wrote to in the last day (RECENT_SECONDS), is
one its tool is likely still writing to. Its next import then parses only the lines it
gained, and stores them without reading back which of the session's nodes are stored. An
older file imported for the first time keeps nothing: most of a machine's history is done
with, and keeping its reading would cost the first import's pace. A text posted to the
server (importTranscript, under its file name) is kept from its first import.

Kept readings live in the cache folder (`CTXDAG_CACHE`, `~/.cache/ctxdag/readings`), one
pickle per file, store, tenant, strictness and limits, written by this program for this
user only (a folder of mode 0700). A large file's reading sets its turns aside on disk as
it is read (spill.py); kept, each of its set-aside files is copied beside its pickle
(`<its name>.<token>.aside`, never written again once named by a pickle), and the reading
loaded reads its turns from there. One made by other code (any change to the service's
sources), of a file that no longer begins with the bytes read, or that cannot be loaded
(a copy it names gone or not of its size), is passed over: the file is read whole, as it
would be without it. The folder is kept under SHELF_BYTES, the least recently kept
reading going first, with its copies.
"""
from __future__ import annotations

import gc
import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import BinaryIO, Callable

from ..model.validate import Limits
from ..model import utf8
from ..store.transcripts import Known
from .packing import Copies, copies_of, pack_into, private, unpack
from .packing import packed as packed_whole
from .reading import Reading

SHELF_BYTES = 1 << 30
# A file below this is parsed whole faster than its reading is loaded.
KEPT_FROM_BYTES = 256 * 1024
# A file its tool wrote to this recently is kept at its first import too.
RECENT_SECONDS = 24 * 3600
_READING = ".reading"


@dataclass
class KeptReading:
    reading: Reading
    known: Known | None
    read_to: int  # bytes of the file fed to `reading`, complete lines
    sha256: str  # of those bytes

    def __post_init__(self) -> None:
        if self.known is not None:  # its rows are the document's, which a loaded reading
            self.known = self.known.without_rows()  # builds anew


class Shelf:
    """The kept readings of one store's tenant (`store` names the Neo4j)."""

    def __init__(self, folder: Path, store: str, tenant: str, limits: Limits,
                 shelf_bytes: int = SHELF_BYTES, freeze: bool = True) -> None:
        """`freeze`: a reading taken is left out of the garbage collector's walks for the
        rest of the process (a one-shot import), not in a server, where it is let go."""
        self.folder, self.shelf_bytes, self.freeze = folder, shelf_bytes, freeze
        self._owner = f"{_code()}\0{store}\0{tenant}\0{limits!r}"

    def take(self, file: str, strict: bool, text: str) -> tuple[KeptReading, str] | None:
        """The reading kept of `file` when its text begins with what was read of it, and
        the text it gained since; None otherwise."""
        kept = self.load(file, strict)
        if kept is None:
            return None
        gained = utf8.after(text, kept.read_to, kept.sha256)
        if gained is None:
            self.drop(file, strict)  # the file is no longer what was read
            return None
        return kept, gained

    def load(self, file: str, strict: bool) -> KeptReading | None:
        """The reading kept of `file`, not checked against it: the caller reads on only
        from a file that begins with its `read_to` bytes hashing to its `sha256` (and
        drops it otherwise)."""
        path = self._path(file, strict)
        if not path.exists():
            return None
        try:
            with path.open("rb") as f:
                if not private(os.fstat(f.fileno())):
                    return None
                kept = unpack(f, self.folder, path.stem)
        except Exception:  # noqa: BLE001 - missing, or not loadable: read the file whole
            return None
        if self.freeze:
            gc.freeze()  # a long parse, not to be walked again by every full collection
        return kept if isinstance(kept, KeptReading) else None

    def holds(self, file: str, strict: bool) -> bool:
        """Whether a reading of `file` is kept (not yet checked against the file)."""
        return self._path(file, strict).exists()

    def keep(self, file: str, strict: bool, kept: KeptReading) -> None:
        """Keeps `kept` for the file's next import (silently not, when it cannot be
        written: it only saves time), packed as it is written: a large reading is never
        held packed whole."""
        if not worth_keeping(kept):
            self.drop(file, strict)
            return
        copies = Copies(self.folder, self._path(file, strict).stem)
        written = False
        try:
            written = self._write(file, strict, lambda f: pack_into(kept, f, copies))
        finally:
            copies.settle(written)

    def put(self, file: str, strict: bool, body: bytes | None) -> None:
        """Keeps a reading `packed` before (none: drops what was kept of the file)."""
        if body is None:
            self.drop(file, strict)
            return
        self._write(file, strict, lambda f: f.write(body))

    def _write(self, file: str, strict: bool, write: Callable[[BinaryIO], object]) -> bool:
        """Whether `write` wrote the file's reading (else nothing of it was written)."""
        temporary = None
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".part")
            with os.fdopen(handle, "wb") as f:
                write(f)
            os.replace(temporary, self._path(file, strict))
        except OSError:
            if temporary is not None:  # a disk full mid-write leaves no part behind
                Path(temporary).unlink(missing_ok=True)
            return False
        try:
            self._trim()
        except OSError:
            pass
        return True

    def drop(self, file: str, strict: bool) -> None:
        path = self._path(file, strict)
        try:
            path.unlink(missing_ok=True)
            for copy in copies_of(self.folder, path.stem):
                copy.unlink(missing_ok=True)
        except OSError:
            pass

    def _path(self, file: str, strict: bool) -> Path:
        name = f"{self._owner}\0{os.path.abspath(file)}\0{strict}"
        return self.folder / f"{hashlib.sha256(name.encode()).hexdigest()}{_READING}"

    def _trim(self) -> None:
        """The least recently kept readings removed, each with its copies, until the shelf
        holds SHELF_BYTES."""
        kept: dict[str, list[Path]] = {}
        last: dict[str, float] = {}
        total = 0
        for path in self.folder.iterdir():
            try:
                stat = path.stat()
            except OSError:
                continue
            stem = path.name.split(".", 1)[0]
            kept.setdefault(stem, []).append(path)
            last[stem] = max(last.get(stem, 0.0), stat.st_mtime)
            total += stat.st_size
        for stem in sorted(kept, key=last.__getitem__):
            if total <= self.shelf_bytes:
                break
            for path in kept[stem]:
                try:
                    size = path.stat().st_size
                    path.unlink()
                except OSError:
                    continue
                total -= size


def packed(kept: KeptReading) -> bytes | None:
    """`kept` as the shelf holds it; None when it is not worth keeping, or its turns were
    set aside (only `Shelf.keep` keeps those, with their copies)."""
    if not worth_keeping(kept) or kept.reading.spill is not None:
        return None
    return packed_whole(kept)


def worth_keeping(kept: KeptReading) -> bool:
    """Not a file parsed whole faster than its reading loads."""
    return kept.read_to >= KEPT_FROM_BYTES


def recent(file: str) -> bool:
    """Whether the file's tool wrote to it in the last RECENT_SECONDS."""
    try:
        return os.stat(file).st_mtime >= time.time() - RECENT_SECONDS
    except OSError:
        return False


def kept_of(reading: Reading, known: Known | None, text: str) -> KeptReading:
    """What to keep of a reading fed `text` whole (hashed a part at a time)."""
    return KeptReading(reading, known, *utf8.digest(text))


@lru_cache(maxsize=1)
def _code() -> str:
    """A digest of the service's sources: a reading kept by other code is not taken."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()
