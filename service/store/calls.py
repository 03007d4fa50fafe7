"""Provenance: recorded model calls and what their prompts contained (READ edges).

`diff_reads` is the one comparison of two prompts (two calls' reads, or a call's reads
and today's render of its head, in service/turns/replay.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from . import validate
from .batch import by_ids, grouped, the_one
from .db import Database
from .models import Call, CallRecord, Node, call_from_row, node_from_row
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
        limit = validate.page_size(limit, maximum=1000)
        rows = await self._db.read("calls_reading", node_id=node_id, tenant=self._tenant,
                                   limit=limit)
        return [CallReading(call_from_row(r["call"]), r["position"]) for r in rows]

    async def in_sessions(self, session_ids: Sequence[str],
                          limit: int = 1000) -> dict[str, list[Call]]:
        """Each session's calls, oldest first (read_ids not loaded)."""
        return await grouped(self._db, "session_calls_many", session_ids, param="session_ids",
                             what="session", group="session_id",
                             build=lambda r: call_from_row(r["call"]), tenant=self._tenant,
                             limit=validate.page_size(limit, maximum=10_000))
