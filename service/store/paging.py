"""Keyset pages over lists that grow (sessions, a session's calls, a node's readers).

Every list has one natural order on a (timestamp, id) key. A `Window` says which
slice of it to read: items after and/or before a cursor, the first or the last
`limit` of them. Paged statements take it as `after_key`, `after_id`, `before_key`,
`before_id`, `from_end` and `limit`, read one item more than asked to learn whether
more lie beyond, and return items in the natural order.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Generic, Sequence, TypeVar

from ..errors import BadInput
from ..model import validate

T = TypeVar("T")

_MAX_CURSOR_LENGTH = 4096  # a cursor holds a timestamp and an id of at most 128 characters
DEFAULT_PAGE = 20  # items in a page when neither first nor last is given
MAX_PAGE = 100


@dataclass(frozen=True)
class Window:
    limit: int
    from_end: bool = False  # the last `limit` items of the range, not the first
    after: tuple[datetime, str] | None = None
    before: tuple[datetime, str] | None = None

    def params(self) -> dict[str, Any]:
        after_key, after_id = self.after or (None, None)
        before_key, before_id = self.before or (None, None)
        return {"after_key": after_key, "after_id": after_id, "before_key": before_key,
                "before_id": before_id, "from_end": self.from_end, "limit": self.limit + 1}


@dataclass(frozen=True)
class Page(Generic[T]):
    """A slice of a list in its natural order, each item with its cursor."""

    items: tuple[T, ...]
    cursors: tuple[str, ...]
    has_next: bool
    has_previous: bool
    total: int | None = None  # the whole list's length, when the statement counted it

    @property
    def start_cursor(self) -> str | None:
        return self.cursors[0] if self.cursors else None

    @property
    def end_cursor(self) -> str | None:
        return self.cursors[-1] if self.cursors else None


def window(first: int | None = None, after: str | None = None, last: int | None = None,
           before: str | None = None, *, default: int = DEFAULT_PAGE,
           maximum: int = MAX_PAGE) -> Window:
    """The slice Relay's `first`/`after`/`last`/`before` name; BadInput for a wrong one."""
    if first is not None and last is not None:
        raise BadInput("give first or last, not both")
    if last is not None:
        limit = validate.page_size(last, maximum, "last")
    else:
        limit = validate.page_size(default if first is None else first, maximum)
    return Window(limit=limit, from_end=last is not None,
                  after=None if after is None else decode_cursor(after, "after"),
                  before=None if before is None else decode_cursor(before, "before"))


def page_of(rows: Sequence[T], win: Window, key: Callable[[T], tuple[datetime, str]],
            total: int | None = None) -> Page[T]:
    """The page from a paged statement's rows (at most `limit + 1`, in the order read)."""
    more = len(rows) > win.limit
    items = list(rows[:win.limit])
    if win.from_end:
        items.reverse()
    has_next, has_previous = (win.before is not None, more) if win.from_end else \
        (more, win.after is not None)
    return Page(tuple(items), tuple(encode_cursor(*key(i)) for i in items), has_next,
                has_previous, total)


def encode_cursor(stamp: datetime, item_id: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([stamp.isoformat(), item_id]).encode()).decode()


def decode_cursor(cursor: object, name: str = "after") -> tuple[datetime, str]:
    """The (timestamp, id) an `encode_cursor` cursor holds; BadInput for anything else."""
    try:
        if not isinstance(cursor, str) or len(cursor) > _MAX_CURSOR_LENGTH:
            raise ValueError("not a cursor")
        fields = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        if not (isinstance(fields, list) and len(fields) == 2 and isinstance(fields[0], str)):
            raise ValueError("not a cursor")
        stamp = validate.timestamp(datetime.fromisoformat(fields[0]), "cursor timestamp")
        return stamp, validate.identifier(fields[1], "cursor id")
    except (ValueError, RecursionError, BadInput):
        raise BadInput(f"the '{name}' cursor is not one this service issued") from None
