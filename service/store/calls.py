"""Provenance: recorded model calls and what their prompts contained (READ edges).

`diff_reads` is the one comparison of two prompts (two calls' reads, or a call's reads
and today's render of its head, in service/turns/replay.py); `cache_break` says where
and why a call's prompt stopped sharing its previous call's prefix (docs/concepts/provenance.md),
whose length each call stores when it is written (cypher/fragments/call_write).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Mapping, Sequence

from ..model import validate
from ..model.ids import utcnow
from .batch import by_ids, the_one
from .db import Database
from ..model.models import Call, CallRecord, Node, Role, call_from_row, node_from_row, validate_call
from .paging import Page, Window, page_of
from .problems import single_row
from ..model.validate import Limits


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


@dataclass(frozen=True)
class ToolsDiff:
    added: tuple[str, ...]  # tool names the second call was offered only, in its order
    removed: tuple[str, ...]  # the first call's only, in its order
    changed: tuple[str, ...]  # offered to both, defined otherwise (the second's order)


def diff_tools(first: Sequence[Mapping], second: Sequence[Mapping]) -> ToolsDiff:
    """How the tools two calls were offered differ, by name (definitions as stored)."""
    before = {t["name"]: t for t in first}
    after = {t["name"]: t for t in second}
    return ToolsDiff(added=tuple(n for n in after if n not in before),
                     removed=tuple(n for n in before if n not in after),
                     changed=tuple(n for n in after if n in before and after[n] != before[n]))


class BreakCause(str, Enum):
    """Which write made a prompt differ from its previous call's where it does."""

    COMPACTION = "COMPACTION"  # a summary the previous prompt did not hold stands there
    UNCOMPACTION = "UNCOMPACTION"  # the previous prompt's summary there is in it no more
    PIN = "PIN"  # a covered turn the previous prompt did not hold renders after its summary
    UNPIN = "UNPIN"  # the previous prompt's covered turn there (pinned then) is in it no more
    EDIT = "EDIT"  # a sibling of the previous prompt's node: an edit, retry or fork
    TOOLS = "TOOLS"  # offered other tools: nothing after them is shared
    BRANCH = "BRANCH"  # another chain (a checkout, a side branch) or a shorter prompt


@dataclass(frozen=True)
class CacheBreak:
    position: int  # the first read position whose node differs (or the prompt's end)
    node_id: str | None  # the call's node there; None when its prompt ends there
    previous_node_id: str | None  # the previous call's node there
    cause: BreakCause


def cache_break(previous: Call, call: Call, nodes: Mapping[str, Node],
                covering: Mapping[str, Sequence[str]]) -> CacheBreak | None:
    """Where `call`'s prompt stopped sharing `previous`'s (its previous_call_id), and which
    write broke it; None when it holds the whole previous prompt. `nodes`: the two nodes at
    the break, by id (read_ids of both calls loaded); `covering`: the ids of the summaries
    whose segments hold each of them (Summaries.covering_many)."""
    before, after = previous.prompt_ids, call.prompt_ids
    shared = call.shared_prefix_reads
    if shared is None or (shared == len(before) and shared <= len(after)):
        return None
    node_id = after[shared] if shared < len(after) else None
    previous_id = before[shared] if shared < len(before) else None
    return CacheBreak(shared, node_id, previous_id, _cause(
        previous, call, nodes.get(node_id or ""), nodes.get(previous_id or ""), covering))


def _cause(previous: Call, call: Call, node: Node | None, was: Node | None,
           covering: Mapping[str, Sequence[str]]) -> BreakCause:
    """What a prompt holds that the other does not decides: the call's node there, new to
    its prompt, was written in (a summary, or a covered turn a pin carries in); else the
    previous call's node there, gone from this prompt, was taken out. Only a pin renders a
    turn in a prompt that also holds a summary covering it (with the other half of its tool
    pair), so this reads the prompts and the summaries' segments, not today's pins."""
    if previous.tools_sha256 != call.tools_sha256:
        return BreakCause.TOOLS
    before, after = previous.prompt_ids, call.prompt_ids
    if node is not None and node.id not in before:
        if node.role is Role.SUMMARY:
            return BreakCause.COMPACTION
        if _pinned_in(node, after, covering):
            return BreakCause.PIN
    if was is not None and was.id not in after:
        if was.role is Role.SUMMARY:
            return BreakCause.UNCOMPACTION
        if _pinned_in(was, before, covering):
            return BreakCause.UNPIN
    if node is not None and was is not None and node.predecessor_id == was.predecessor_id:
        return BreakCause.EDIT
    return BreakCause.BRANCH


def _pinned_in(node: Node, reads: Sequence[str], covering: Mapping[str, Sequence[str]]) -> bool:
    """Whether the prompt (`reads`) holds a summary whose segment holds the turn `node`."""
    return not set(covering.get(node.id, ())).isdisjoint(reads)


@dataclass(frozen=True)
class CacheTotals:
    """Calls' prompt-cache accounting, summed (a field a call lacks counts 0)."""

    calls: int = 0
    prompt_tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    shared_prefix_tokens: int = 0


class Calls:
    def __init__(self, db: Database, tenant: str, limits: Limits) -> None:
        self._db, self._tenant, self._limits = db, tenant, limits

    async def record(self, session_id: str, record: CallRecord) -> Call:
        """Records a call that produced no node (a failure, an external call without output).

        One round trip: the stored call is the record and what the statement worked out
        about it (its prompt's tokens, its shared prefix with the previous call), which the
        statement returns.
        """
        validate.identifier(session_id, "session id")
        validate_call(record, self._limits)
        rows = await self._db.write("call_record",
                                    single_row(session_id, {"session_id": session_id}),
                                    session_id=session_id, tenant=self._tenant,
                                    call=record.as_param(), now=utcnow())
        return Call(**rows[0]["accounting"],id=record.id, session_id=session_id, purpose=record.purpose,
                    provider=record.provider, model=record.model, head_id=record.head_id,
                    read_ids=record.read_ids, read_count=len(record.read_ids), output_id=None,
                    started_at=record.started_at, finished_at=record.finished_at,
                    input_tokens=record.input_tokens, output_tokens=record.output_tokens,
                    error_code=record.error_code, error_message=record.error_message,
                    cache_creation_input_tokens=record.cache_creation_input_tokens,
                    cache_read_input_tokens=record.cache_read_input_tokens,
                    recalled_reads=record.recalled_reads)

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


    async def cache_totals(self, scopes: Sequence[tuple[str, str | None]]
                           ) -> dict[tuple[str, str | None], CacheTotals]:
        """Prompt-cache totals per (session id, branch tip id): a session's calls with no
        tip, the calls whose head lies on the tip's chain with one."""
        for session_id, tip_id in scopes:
            validate.identifier(session_id, "session id")
            validate.optional_identifier(tip_id, "tip id")
        rows = await self._db.read("call_cache_totals", tenant=self._tenant, scopes=[
            {"session_id": s, "tip_id": t} for s, t in dict.fromkeys(scopes)])
        return {(row["session_id"], row["tip_id"]): CacheTotals(**row["totals"])
                for row in rows}


def _reading_key(reading: CallReading) -> tuple[datetime, str]:
    return reading.call.started_at, reading.call.id
