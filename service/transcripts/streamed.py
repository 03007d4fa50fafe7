"""A large transcript file's first import without holding the file or its document: the
file is read a part at a time into its Reading (reading.py), its bytes hashed as they
pass (the fingerprint an unchanged file is recognised by, and IMPORTED: what the session
notes of the lines it was read from), and its document's node rows are built a part at a
time while the store writes them (store/transcript_parts.py). The session is the one the
file read whole makes; only the memory differs, which follows a part's rows and the parse,
not the file's text and every row; the reading sets its turns' blocks aside on disk as it
goes (spill.py), so it holds their structure only, and lets go of its parse once its
document is planned unless it is kept (kept.py).

A file is read so when it holds STREAM_FROM_BYTES or more. When its session exists (the
file grew since its import), the bytes the session was imported from are hashed as they
pass, and the store compares its rows with the stored ones a part at a time
(store/transcript_growth.py). A followed file (follow.py) is read so from the complete
lines the follower read of it, its growing tail held back, at its first poll.
"""
from __future__ import annotations

import contextlib
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Mapping

from ..errors import BadInput, CtxdagError
from ..model.validate import Limits
from ..store.transcripts import IMPORTED
from . import FORMATS, Beside, beside, claude_code, detect, reading_of, side_text
from .document import Plan
from .jsonl import text_parts, utf8
from .kept import KeptReading
from .model import Mode, NotATranscript, Transcript
from .reading import Reading
from .spill import opened as spill_file

STREAM_FROM_BYTES = 4 << 20
_READ_BYTES = 1 << 20
_HEAD_BYTES = 64 << 10


@dataclass
class Streamed:
    """A file read a part at a time, its document planned (store/transcript_parts.InParts)."""

    reading: Reading | None  # None when it is kept nowhere
    plan: Plan
    mode: Mode
    imported: dict[str, Any]  # IMPORTED: {bytes, sha256} of its complete lines
    read_as: dict[str, Any]  # its fingerprint, with its sub-agents' files
    complete: bool  # it ends at a line's end
    settled: bool = False  # its growing tail held back (follow.py): not all the text holds
    # Of a file whose session is stored (a growth): how many of the bytes its session was
    # last imported from it read as complete lines, and their sha256.
    prefix: tuple[int, int, str] | None = None  # (bytes asked, bytes read, sha256)
    grows: bool = False  # its session is stored: what it gained is stored (a growth)

    @property
    def session_id(self) -> str:
        return self.plan.sid

    @property
    def size(self) -> int:
        return self.plan.size

    @property
    def roles(self) -> Mapping[str, str]:
        return self.plan.roles

    @property
    def keeps_rows(self) -> bool:
        return self.plan.memo is not None

    @property
    def keeps_known(self) -> bool:
        return self.reading is not None  # kept for the file's next growth

    def rows(self, start: int, stop: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        rows, media = self.plan.rows(start, stop, self.mode)
        return rows, sorted(media.values(), key=lambda m: m["sha256"])

    def again(self, positions: Iterable[int]
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The node rows at `positions` built once more (and the media they carry), what
        building them degrades not told again."""
        nodes: list[dict[str, Any]] = []
        media: dict[str, dict[str, Any]] = {}
        for position in positions:
            rows, carried = self.plan.rows(position, position + 1, Mode(self.mode.strict))
            nodes += rows
            media.update(carried)
        return nodes, sorted(media.values(), key=lambda m: m["sha256"])

    def begins(self, size: int) -> tuple[int, str] | None:
        """Of the file's first `size` bytes (those its session was imported from), how many
        it holds as complete lines and their sha256; None when it was not read for that."""
        if self.prefix is None or self.prefix[0] != size:
            return None
        return self.prefix[1], self.prefix[2]

    def header(self) -> dict[str, Any]:
        header = {**self.plan.header, IMPORTED: self.imported}
        # As document_of: the session is all the text holds (no tail held back), and only it.
        if not self.mode.degraded and not self.settled:
            session = header["session"]
            header["session"] = {**session, "properties": {**session["properties"],
                                                           **self.read_as}}
        return header


def streams(file: str) -> bool:
    """Whether a file is large enough to be read a part at a time."""
    try:
        return file != "-" and Path(file).stat().st_size >= STREAM_FROM_BYTES
    except OSError:
        return False


def read_as(file: str, format: str | None, strict: bool, read_text: Callable[[str], str]
            ) -> tuple[str, dict[str, Any], int] | None:
    """The file's format, fingerprint (what `unchanged` compares) and lines, its bytes
    hashed a part at a time; None when its first part holds no line its format is told by
    (the file is read whole, which says why or reads further)."""
    with _opened(file) as f:
        head = next(_lines(f), b"")
        if format is not None and format not in FORMATS:
            return None  # the whole read names the formats
        if format is None:
            try:
                format = detect(utf8(head, file), file, strict)
            except NotATranscript:
                return None
        f.seek(0)
        digest, size, lines = _digest(file, format), 0, 0
        for block in iter(lambda: f.read(_READ_BYTES), b""):
            digest.update(block)
            size += len(block)
            lines += block.count(b"\n")
    return format, _fingerprint(digest, size, beside(file, format, read_text)), lines


def complete_read_as(data: bytes, file: str, format: str | None, strict: bool,
                     read_text: Callable[[str], str]) -> tuple[str, dict[str, Any]] | None:
    """`read_as` of a file's complete lines, read already (`data`: a followed file's):
    its format and fingerprint, or None as `read_as` says."""
    if format is not None and format not in FORMATS:
        return None
    if format is None:
        try:
            format = detect(utf8(data[:data.find(b"\n") + 1], file), file, strict)
        except NotATranscript:
            return None
    return format, _hashed([data], file, format, beside(file, format, read_text))


def session_key_of(file: str, tool: str) -> str | None:
    """The session key the file's first lines name (a Claude Code session is named by its
    file), so that a file whose session is stored is read whole without a first parse;
    None when they do not tell. A guess only: the whole read names the session."""
    if tool == claude_code.TOOL:
        return PurePath(file).stem or None
    with _opened(file) as f:
        head = f.read(_HEAD_BYTES)
    reading = Reading(file, tool, "", Limits())
    try:
        reading.feed(utf8(head[:head.rfind(b"\n") + 1], file))
        return reading.transcript(Mode()).session_key
    except CtxdagError:
        return None


def read(file: str, tool: str, tenant: str, limits: Limits, mode: Mode,
         read_text: Callable[[str], str], spill: bool = False, keep: bool = True,
         prefix: int | None = None) -> Streamed:
    """The file of format `tool` read a part at a time (and the sub-agents beside it),
    planned. With `spill`, its turns' blocks are set aside on disk as it is read
    (spill.py). Unless it is to `keep` its reading (kept.py), the parse is let go before
    the plan lays out the turns. `prefix`: the bytes its stored session was imported from,
    hashed as they pass (Streamed.begins), for a growth."""
    with _opened(file) as f:
        return _planned(_decoded(_lines(f), file), file, tool, tenant, limits, mode,
                        lambda: beside(file, tool, read_text), spill=spill,
                        keep=keep, prefix=prefix)


def read_on(kept: KeptReading, file: str, tool: str, mode: Mode,
            read_text: Callable[[str], str], prefix: int) -> Streamed | None:
    """The file read on from the reading kept of it (kept.py): its bytes up to
    `kept.read_to` hashed, not parsed again, and the lines after them fed to the reading;
    planned as `read` plans a growth (`prefix` as for `read`), the reading kept. None when
    the file does not begin with what the reading read (it is then of no use)."""
    with _opened(file) as f:
        return _planned(_decoded(_cut_at(_lines(f), kept.read_to), file), file, tool,
                        kept.reading.tenant, kept.reading.limits, mode,
                        lambda: beside(file, tool, read_text), prefix=prefix,
                        kept=kept)


def read_complete(data: bytes, file: str, tool: str, tenant: str, limits: Limits, mode: Mode,
                  read_text: Callable[[str], str], settle: Callable[[Transcript], Transcript],
                  keep_rows: bool, prefix: int | None = None) -> Streamed:
    """A followed file's complete lines (`data`, read already) read as `read` reads the
    file, with the sub-agents beside it, its turns set aside as it is read (a growth reads
    back only the turns it changes); `settle` cuts what may still grow. With `keep_rows`
    the rows are kept in the Reading's memo as they are built, for the file's next growth
    to take. `prefix` as for `read`."""
    return _planned(_decoded(_lines(io.BytesIO(data)), file), file, tool, tenant, limits,
                    mode, lambda: beside(file, tool, read_text), settle, keep_rows,
                    spill=True, prefix=prefix)


def read_given(text: str, file: str, format: str | None, tenant: str, limits: Limits,
               mode: Mode, spill: bool = False, keep: bool = True) -> Streamed:
    """A text given whole (importTranscript), planned as `read` plans a file, fed and
    hashed a part at a time all the same (it has no side files); `spill` and `keep` as for
    `read`."""
    tool = format or detect(text, file, mode.strict)
    if tool not in FORMATS:
        reading_of(text, file, tool, tenant, limits, mode.strict)  # BadInput naming them
    return _planned(((part, part.encode("utf-8")) for part in text_parts(text)), file, tool,
                    tenant, limits, mode, lambda: Beside([]), spill=spill, keep=keep)


def given_read_as(text: str, file: str, format: str | None, strict: bool
                  ) -> tuple[str, dict[str, Any]]:
    """`read_as` of a text given whole: its format and fingerprint (a text has no side
    files), hashed a part at a time."""
    tool = format or detect(text, file, strict)
    return tool, _hashed((part.encode("utf-8") for part in text_parts(text)), file, tool,
                         Beside([]))


def _planned(parts: Iterator[tuple[str, bytes]], file: str, tool: str, tenant: str,
             limits: Limits, mode: Mode,
             beside_of: Callable[[], Beside],
             settle: Callable[[Transcript], Transcript] | None = None,
             keep_rows: bool = False, spill: bool = False, keep: bool = True,
             prefix: int | None = None, kept: KeptReading | None = None) -> Streamed | None:
    """A Reading fed `parts` ((text, its bytes) each, ending at a line's end but the last),
    their bytes hashed, and its document planned with what `beside_of` finds beside the
    file once it is read (`settle` and `keep_rows`: Reading.plan's;
    `spill`, `keep` and `prefix`: read's). With `kept`, its reading is fed only the parts
    after its `read_to` bytes (one part ends there), and None is returned when those bytes
    are not what it read."""
    reading = kept.reading if kept is not None else Reading(
        file, tool, tenant, limits, mode.strict, spill=spill_file() if spill else None)
    whole, complete = _digest(file, tool), hashlib.sha256()
    read_to = offset = 0
    begun = hashlib.sha256()
    for text, data in parts:
        if kept is None or offset >= kept.read_to:
            reading.feed(text)
        offset += len(data)
        whole.update(data)
        if data.endswith(b"\n"):
            complete.update(data)
            if prefix is not None and read_to < prefix:
                begun.update(data[:prefix - read_to])
            read_to += len(data)
        if kept is not None and offset == kept.read_to and complete.hexdigest() != kept.sha256:
            return None  # not what the reading read: nothing was fed to it
    if kept is not None and read_to < kept.read_to:
        return None
    side = beside_of()
    planned = reading.plan(mode, side.agents, settle, keep_rows, last=not keep, named=side.named)
    return Streamed(reading if keep else None, planned, mode,
                    {"bytes": read_to, "sha256": complete.hexdigest()},
                    _fingerprint(whole, offset, side), read_to == offset,
                    settle is not None, None if prefix is None else
                    (prefix, min(prefix, read_to), begun.hexdigest()))


def _cut_at(parts: Iterator[bytes], at: int) -> Iterator[bytes]:
    """`parts` with one of them ending `at` bytes in (a line's end)."""
    offset = 0
    for data in parts:
        if offset < at < offset + len(data):
            yield data[:at - offset]
            data = data[at - offset:]
            offset = at
        yield data
        offset += len(data)


def _decoded(parts: Iterator[bytes], file: str) -> Iterator[tuple[str, bytes]]:
    offset = 0
    for data in parts:
        yield utf8(data, file, offset), data
        offset += len(data)


def _digest(file: str, tool: str) -> Any:
    """fingerprint's hash, before the file's bytes."""
    return hashlib.sha256(f"{file}\0{tool}\0".encode("utf-8"))


def _hashed(parts: Iterable[bytes], file: str, tool: str, side: Beside) -> dict[str, Any]:
    """_fingerprint of a file's bytes `parts`, hashed one after another."""
    digest, size = _digest(file, tool), 0
    for data in parts:
        digest.update(data)
        size += len(data)
    return _fingerprint(digest, size, side)


def _fingerprint(digest: Any, size: int, side: Beside) -> dict[str, Any]:
    """source_fingerprint's of a file hashed into `digest` (`size` bytes) and what is read
    with it (`side`)."""
    beside_text = side_text(side).encode("utf-8")
    digest.update(beside_text)
    return {"source_bytes": size + len(beside_text),
            "source_prefix_sha256": digest.hexdigest()}


def _lines(f: BinaryIO) -> Iterator[bytes]:
    """The file's bytes in parts of about _READ_BYTES, each ending at a line's end (the
    last, at the file's end)."""
    carry = b""
    for block in iter(lambda: f.read(_READ_BYTES), b""):
        data = carry + block
        cut = data.rfind(b"\n") + 1
        carry = data[cut:]
        if cut:
            yield data[:cut]
    if carry:
        yield carry


@contextlib.contextmanager
def _opened(file: str) -> Iterator[BinaryIO]:
    try:
        f = open(file, "rb")
    except OSError as e:
        raise BadInput(f"cannot read {file}: {e.strerror or e}") from e
    with f:
        yield f
