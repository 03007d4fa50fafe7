"""A long text hashed as UTF-8 a part at a time: a transcript file's text is never held
twice, as text and as bytes, to be hashed (its fingerprint, what an import read of it,
what a kept reading read of it)."""
from __future__ import annotations

import hashlib
from typing import Iterator

# Characters encoded at once.
PART_CHARACTERS = 1 << 20


def parts(text: str, stop: int | None = None) -> Iterator[bytes]:
    """`text[:stop].encode("utf-8")`, a part at a time."""
    stop = len(text) if stop is None else stop
    for start in range(0, stop, PART_CHARACTERS):
        yield text[start:min(stop, start + PART_CHARACTERS)].encode("utf-8")


def digest(text: str, stop: int | None = None) -> tuple[int, str]:
    """The size in bytes and the sha256 of `text[:stop]` as UTF-8."""
    hashed, size = hashlib.sha256(), 0
    for part in parts(text, stop):
        hashed.update(part)
        size += len(part)
    return size, hashed.hexdigest()


def after(text: str, size: int, sha256: str) -> str | None:
    """What `text` holds after its first `size` bytes as UTF-8, when those hash to
    `sha256` and end at a character's end; None otherwise."""
    hashed, done = hashlib.sha256(), 0
    for start in range(0, len(text), PART_CHARACTERS):
        part = text[start:start + PART_CHARACTERS].encode("utf-8")
        if done + len(part) < size:
            hashed.update(part)
            done += len(part)
            continue
        head = part[:size - done]
        hashed.update(head)
        try:
            at = start + len(head.decode("utf-8"))
        except UnicodeDecodeError:  # not at a character's start
            return None
        return text[at:] if hashed.hexdigest() == sha256 else None
    return "" if done == size and hashed.hexdigest() == sha256 else None
