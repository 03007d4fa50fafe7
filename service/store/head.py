"""Who moves HEAD: this module, and nothing else.

HEAD changes only through these user-facing moves, each one statement:

- `append_message` (cypher/append_message.cypher) advances HEAD when the new node's
  predecessor *is* HEAD (the conversation grew) and the writer allows it, decided in
  the same statement as the write; any other insert (a side branch, a write under an
  older node, a spawned turn) leaves HEAD where it was;
- `set_head` (checkout) and `rewind` move it to an existing node (set_head.cypher);
- `retry` / `edit` fork a sibling and move HEAD onto it (fork_sibling.cypher);
- `delete_branch` moves it to the fork point when it sat on the deleted part;
- `complete_draft` (draft_reply.cypher) writes completeTurn's reply after its draft's tip,
  advancing HEAD by append's rule: only when the tip is still HEAD;
- `carry_over` (carry_write.cypher) appends a carry node after a target head, moving HEAD
  onto it when that head is HEAD, or as the end of a checkout from HEAD to it.

The two statements that write a node share how it is written and how HEAD moves onto
it (cypher/fragments/node_write.cypher). Compaction, loading, restarts and metadata
saves never call any of these.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping, Sequence

from ..model import validate
from ..model.blocks import message_blocks
from .db import Database, RowCheck
from .drafts import missing_draft
from .events import Events
from ..model.ids import new_id, utcnow
from ..model.models import (
    Appended, CallRecord, Carried, DeletedBranch, HeadMove, Role, node_from_row, validate_call,
)
from .problems import single_row
from .tool_sets import version_from_row
from ..model.validate import Limits


class HeadMoves:
    def __init__(self, db: Database, tenant: str, limits: Limits, events: Events) -> None:
        self._db, self._tenant, self._limits = db, tenant, limits
        self._events = events

    async def append_message(
        self,
        session_id: str,
        role: Role | str,
        content: str | None = None,
        *,
        blocks: Sequence[Any] | None = None,
        predecessor_id: str | None = None,
        caller_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        side_branch: bool = False,
        advance_head: bool = True,
        call: CallRecord | None = None,
        offer_tools: bool = False,
        tools_to_check: Sequence[str] = (),
    ) -> Appended:
        """Appends after `predecessor_id` (default: HEAD). One statement, one transaction.

        HEAD moves onto the new node only when its predecessor is HEAD and
        `advance_head` holds (a spawned sub-agent turn writes with it off). The message
        is `content` (plain text) or `blocks` (service/model/blocks.py), never both.
        `side_branch` marks a spawned branch (and, by inheritance, everything under
        it): such nodes never count as user branches. `call`, when given, is the
        model call that produced this node, recorded in the same transaction.
        With `offer_tools` the same statement reads the tool set in force at the new node
        (`Appended.tool_set`, for the turn it opens); it refuses with ToolsToCheck, writing
        nothing, when that set's definitions may name one of `tools_to_check`.
        """
        ids = {"session_id": validate.identifier(session_id, "session id"),
               "predecessor_id": validate.optional_identifier(predecessor_id, "predecessor id"),
               "caller_id": validate.optional_identifier(caller_id, "caller id")}
        return await self._write_node("append_message", ids, role, content, blocks, metadata,
                                      call, side_branch=side_branch, advance_head=advance_head,
                                      offer_tools=offer_tools,
                                      tools_to_check=list(tools_to_check))

    async def complete_draft(self, draft_id: str, client_key: str, content: str | None, *,
                             blocks: Sequence[Any] | None, metadata: Mapping[str, Any],
                             call: CallRecord, keep_until: datetime) -> Appended:
        """completeTurn's reply (store/drafts.py): written after the draft's tip with the call
        that produced it, one statement. HEAD moves onto it only when HEAD is still the tip
        (append's rule); otherwise the reply ends a branch of its own. Stale when an attempt
        under `client_key` committed first."""
        ids = {"draft_id": validate.identifier(draft_id, "draft id"), "client_key": client_key}
        return await self._write_node("draft_reply", ids, Role.ASSISTANT, content, blocks,
                                      metadata, call, check=missing_draft(draft_id, client_key),
                                      keep_until=keep_until)

    async def set_head(self, session_id: str, node_id: str) -> HeadMove:
        """Checkout: HEAD to any live, non-summary node of the session."""
        return await self._move(session_id, node_id, require_ancestor=False)

    async def rewind(self, session_id: str, node_id: str) -> HeadMove:
        """HEAD back to an ancestor of HEAD (or HEAD itself); nothing is deleted."""
        return await self._move(session_id, node_id, require_ancestor=True)

    async def retry(self, node_id: str, content: str | None = None, *,
                    blocks: Sequence[Any] | None = None,
                    metadata: Mapping[str, Any] | None = None,
                    call: CallRecord | None = None) -> Appended:
        """A new sibling of assistant reply `node_id`; HEAD moves onto it."""
        return await self._fork(node_id, Role.ASSISTANT, content, blocks, metadata, call)

    async def edit(self, node_id: str, content: str | None = None, *,
                   blocks: Sequence[Any] | None = None,
                   metadata: Mapping[str, Any] | None = None,
                   offer_tools: bool = False, tools_to_check: Sequence[str] = ()) -> Appended:
        """A new sibling of user message `node_id` with new content; HEAD moves onto it.
        `offer_tools` and `tools_to_check` as for append_message: the edit opens a turn."""
        return await self._fork(node_id, Role.USER, content, blocks, metadata, None,
                                offer_tools=offer_tools, tools_to_check=list(tools_to_check))

    async def delete_branch(self, session_id: str, tip_id: str) -> DeletedBranch:
        ids = {"session_id": validate.identifier(session_id, "session id"),
               "tip_id": validate.identifier(tip_id, "tip id")}
        rows = await self._db.write("delete_branch", single_row(session_id, ids),
                                    tenant=self._tenant, now=utcnow(), **ids)
        row = rows[0]
        await self._events.committed(session_id, row["events"])
        return DeletedBranch(
            session_id=session_id, tip_id=tip_id, fork_point_id=row["fork_point_id"],
            deleted_ids=tuple(row["deleted_ids"]),
            head=HeadMove(session_id, row["previous_head_id"], row["head_id"]),
        )

    async def carry_over(self, session_id: str, from_id: str, into_id: str,
                         carried_ids: Sequence[str], content: str, *, checkout: bool = False,
                         instructions: str | None = None,
                         metadata: Mapping[str, Any] | None = None,
                         call: CallRecord | None = None) -> Carried:
        """Writes the summary `content` of `carried_ids` (Carries.segment of from_id and
        into_id, chain order) as a carry node after `into_id`, one statement.

        HEAD moves onto it when `into_id` is HEAD; with `checkout`, HEAD must still be
        `from_id` (else Conflict) and moves onto it: the user's checkout to `into_id`,
        completed by the summary of the branch left. `call` is the summarizer's call."""
        ids = {"session_id": validate.identifier(session_id, "session id"),
               "from_id": validate.identifier(from_id, "fromTip"),
               "into_id": validate.identifier(into_id, "intoHead")}
        for node_id in carried_ids:
            validate.identifier(node_id, "carried id")
        message = message_blocks(Role.CARRY, content, None, self._limits)
        meta = validate.json_object(metadata, self._limits, "metadata")
        if call is not None:
            validate_call(call, self._limits)
        rows = await self._db.write(
            "carry_write", single_row(session_id, ids), tenant=self._tenant,
            node_id=new_id("nod"), role=Role.CARRY.value, metadata=meta, now=utcnow(),
            carried_ids=list(carried_ids), instructions=validate.instructions(instructions),
            checkout=checkout, call=None if call is None else call.as_param(),
            **message.params, **ids)
        row = rows[0]
        node = node_from_row(row["node"])
        await self._events.committed(session_id, row["events"])
        return Carried(node, tuple(carried_ids), bool(row["head_moved"]),
                       row["previous_head_id"])

    async def _move(self, session_id: str, node_id: str, require_ancestor: bool) -> HeadMove:
        ids = {"session_id": validate.identifier(session_id, "session id"),
               "node_id": validate.identifier(node_id, "node id")}
        rows = await self._db.write("set_head", single_row(session_id, ids), tenant=self._tenant,
                                    require_ancestor=require_ancestor, now=utcnow(), **ids)
        await self._events.committed(session_id, rows[0]["events"])
        return HeadMove(session_id, rows[0]["previous_head_id"], rows[0]["head_id"])

    async def _fork(self, node_id: str, role: Role, content: str | None,
                    blocks: Sequence[Any] | None, metadata: Mapping[str, Any] | None,
                    call: CallRecord | None, offer_tools: bool = False,
                    tools_to_check: Sequence[str] = ()) -> Appended:
        ids = {"fork_of": validate.identifier(node_id, "node id")}
        return await self._write_node("fork_sibling", ids, role, content, blocks, metadata, call,
                                      offer_tools=offer_tools,
                                      tools_to_check=list(tools_to_check))

    async def _write_node(self, statement: str, ids: Mapping[str, str | None],
                          role: Role | str, content: str | None, blocks: Sequence[Any] | None,
                          metadata: Mapping[str, Any] | None, call: CallRecord | None,
                          check: RowCheck | None = None, **params: Any) -> Appended:
        """Runs `statement` (append_message or fork_sibling): one statement, one transaction.

        `ids` are the statement's id parameters, named in its errors.
        """
        role = validate.appendable_role(role)
        message = message_blocks(role, content, blocks, self._limits)
        meta = validate.json_object(metadata, self._limits, "metadata")
        if call is not None:
            validate_call(call, self._limits)
        rows = await self._db.write(
            statement, check or single_row(ids.get("session_id"), {**ids, **message.problem_ids}),
            tenant=self._tenant, node_id=new_id("nod"), role=role.value, metadata=meta,
            now=utcnow(), call=None if call is None else call.as_param(), **message.params,
            **ids, **params,
        )
        row = rows[0]
        node = node_from_row(row["node"])
        await self._events.committed(node.session_id, row["events"])
        tool_set = row.get("tool_set")
        return Appended(node, bool(row["head_moved"]), row["previous_head_id"],
                        row["summary_version"],
                        None if tool_set is None else version_from_row(tool_set))
