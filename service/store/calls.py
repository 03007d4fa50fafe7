"""Provenance: recorded model calls and what their prompts contained (READ edges).

`diff_reads` is the one comparison of two prompts (two calls' reads, or a call's reads
and today's render of its head, in service/turns/replay.py).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from . import validate
from .batch import by_ids, the_one
from .db import Database
from .models import Call, CallRecord, Node, call_from_row, node_from_row
from .paging import Page, Window, page_of
from .problems import single_row
from .validate import Limits


@dataclass(frozen=True)
class CallReading:
    call: Call
    position: int  # where in the call's prompt the node was


@dataclass(frozen=True)
class ReadsDiff:
    added: tuple[str, ...]  # in the second prompt only, in its order
    dropped: tuple[str, ...]  # in the first prompt only, in its order
    kept: tuple[str, ...]  # in both, in the second prompt's order
    # kept, whose place among the kept nodes differs between the prompts (second's order)
    moved: tuple[str, ...] = ()


def diff_reads(first: Sequence[str], second: Sequence[str]) -> ReadsDiff:
    """What the second prompt (node ids in prompt order) holds that the first does not,
    the reverse, and which nodes both hold in another order."""
    in_first, in_second = set(first), set(second)
    kept = tuple(i for i in second if i in in_first)
    kept_in_first_order = [i for i in first if i in in_second]
    return ReadsDiff(
        added=tuple(i for i in second if i not in in_first),
        dropped=tuple(i for i in first if i not in in_second),
        kept=kept,
        moved=tuple(i for i, was in zip(kept, kept_in_first_order) if i != was),
    )


class Calls:
    def __init__(self, db: Database, tenant: str, limits: Limits) -> None:
        self._db, self._tenant, self._limits = db, tenant, limits

    async def record(self, session_id: str, record: CallRecord) -> Call:
        """Records a call that produced no node (a failure, an external call without output).

        One round trip: the stored call is exactly the record, so it is not read back.
        """
        validate.identifier(session_id, "session id")
        validate.call_record(record, self._limits)
        await self._db.write("call_record", single_row(session_id, {"session_id": session_id}),
                             session_id=session_id, tenant=self._tenant, call=record.as_param())
        return Call(id=record.id, session_id=session_id, purpose=record.purpose,
                    provider=record.provider, model=record.model, head_id=record.head_id,
                    read_ids=record.read_ids, read_count=len(record.read_ids), output_id=None,
                    started_at=record.started_at, finished_at=record.finished_at,
                    input_tokens=record.input_tokens, output_tokens=record.output_tokens,
                    error_code=record.error_code, error_message=record.error_message)

    async def get(self, call_id: str) -> Call:
        return the_one(await self.get_many([call_id]), "call", call_id)

    async def get_many(self, call_ids: Sequence[str]) -> list[Call]:
        return await by_ids(self._db, "call_get_many", call_ids, param="call_ids", what="call",
                            build=lambda r: call_from_row(r["call"]), key=lambda c: c.id,
                            tenant=self._tenant)

    async def tool_sets(self, hashes: Sequence[str]) -> dict[str, list[dict]]:
        """The tool definitions calls were offered, by content hash (the tenant's)."""
        if not hashes:
            return {}
        rows = await self._db.read("tool_set_get_many", hashes=list(hashes), tenant=self._tenant)
        return {row["sha256"]: json.loads(row["tools"]) for row in rows}

    async def reads(self, call_id: str) -> list[Node]:
        """The nodes the call's prompt contained, in prompt order, with content."""
        validate.identifier(call_id, "call id")
        rows = await self._db.read("call_reads", call_id=call_id, tenant=self._tenant)
        if not rows:
            await self.get(call_id)  # a call always reads something; say which is missing
        return [node_from_row(row["node"]) for row in rows]

    async def reading(self, node_id: str, limit: int = 100) -> list[CallReading]:
        """Which calls read `node_id`, newest first."""
        validate.identifier(node_id, "node id")
        win = Window(validate.page_size(limit, maximum=1000))
        return list((await self.readers_pages([node_id], win))[node_id].items)

    async def readers_pages(self, node_ids: Sequence[str],
                            win: Window) -> dict[str, Page[CallReading]]:
        """A page of the calls that read each node, newest first; an unknown node reads
        as no calls."""
        for node_id in node_ids:
            validate.identifier(node_id, "node id")
        rows = await self._db.read("node_readers_page", node_ids=list(node_ids),
                                   tenant=self._tenant, **win.params())
        found = {row["node_id"]: page_of(
            [CallReading(call_from_row(r["call"]), r["position"]) for r in row["readings"]],
            win, _reading_key, row["total"]) for row in rows}
        return {i: found.get(i) or page_of([], win, _reading_key, 0) for i in node_ids}

    async def in_sessions(self, session_ids: Sequence[str],
                          limit: int = 1000) -> dict[str, list[Call]]:
        """Each session's first calls, oldest first (read_ids not loaded)."""
        win = Window(validate.page_size(limit, maximum=10_000))
        pages = await self.session_pages(session_ids, win)
        return {session_id: list(page.items) for session_id, page in pages.items()}

    async def session_pages(self, session_ids: Sequence[str],
                            win: Window) -> dict[str, Page[Call]]:
        """A page of each session's calls, oldest first (read_ids not loaded)."""
        for session_id in session_ids:
            validate.identifier(session_id, "session id")
        rows = await self._db.read("session_calls_page", session_ids=list(session_ids),
                                   tenant=self._tenant, **win.params())
        return {row["session_id"]: page_of([call_from_row(c) for c in row["calls"]], win,
                                           lambda c: (c.started_at, c.id), row["total"])
                for row in rows}


def _reading_key(reading: CallReading) -> tuple[datetime, str]:
    return reading.call.started_at, reading.call.id
