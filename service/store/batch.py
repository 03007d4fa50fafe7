"""Batch reads: the `*_many` statements take a list of ids and answer in one round trip.

Single lookups are batches of one, so there is one code path per kind of record.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence, TypeVar

from ..errors import NotFound
from ..model import validate
from .db import Database

T = TypeVar("T")


async def by_ids(db: Database, query: str, ids: Sequence[str], *, param: str, what: str,
                 build: Callable[[dict[str, Any]], T], key: Callable[[T], str],
                 torn: Callable[[list[dict[str, Any]]], bool] | None = None,
                 **params: Any) -> list[T]:
    """The records that exist, in the order asked; unknown ids are left out.

    `torn`: says when the rows caught a concurrent write half applied (read again).
    """
    for record_id in ids:
        validate.identifier(record_id, f"{what} id")
    if torn is None:
        rows = await db.read(query, **{param: list(ids)}, **params)
    else:
        rows = await db.read_untorn(query, torn, **{param: list(ids)}, **params)
    found = {key(record): record for record in map(build, rows)}
    return [found[i] for i in ids if i in found]


async def grouped(db: Database, query: str, ids: Sequence[str], *, param: str, what: str,
                  group: str, build: Callable[[dict[str, Any]], T],
                  **params: Any) -> dict[str, list[T]]:
    """Rows grouped by the id they belong to (`group` column), in row order; [] for none."""
    for record_id in ids:
        validate.identifier(record_id, f"{what} id")
    rows = await db.read(query, **{param: list(ids)}, **params)
    out: dict[str, list[T]] = {record_id: [] for record_id in ids}
    for row in rows:
        out[row[group]].append(build(row))
    return out


def the_one(found: Sequence[T], kind: str, record_id: str) -> T:
    if not found:
        raise NotFound(kind, record_id)
    return found[0]
