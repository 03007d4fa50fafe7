"""The turn writer: every chain write of a turn, and the turn's HEAD policy, in one object.

A turn writes its opening node (the user message, or a spawned branch's root), then
either the reply with the model call that produced it, or — on the error path — the
failed call alone. Nodes are immutable, so there is no placeholder row to finalize:
the reply is written once, when the model has answered, together with its call.

`advance_head` is the turn's policy. With it on (a user's turn), HEAD advances when
a write extends HEAD; with it off (a spawned sub-agent turn), no write of the turn
touches HEAD. Retry and edit are explicit user moves and move HEAD to the new fork.
Nothing else in service/turns writes to the chain.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any, Mapping, Sequence

from ..errors import BadInput
from ..store import Appended, Call, CallRecord, Ledger, Node, Role
from ..model.blocks import tool_use_ids
from ..model.validate import some

CANCELLED = "cancelled: the user sent a new message instead of waiting for this result"


class TurnWriter:
    def __init__(self, ledger: Ledger, session_id: str, *, advance_head: bool,
                 side_branch: bool = False, caller_id: str | None = None) -> None:
        self._ledger = ledger
        self.session_id = session_id
        self.advance_head = advance_head
        self._side_branch = side_branch
        self._caller_id = caller_id

    async def open(self, content: str | None = None, *, blocks: Sequence[Any] | None = None,
                   predecessor_id: str | None = None,
                   metadata: Mapping[str, Any] | None = None,
                   tools_to_check: Sequence[str] | None = None) -> Appended:
        """The turn's opening user node: at HEAD, or under `predecessor_id`. With
        `tools_to_check` (a list) the same statement reads the tool set in force
        (Appended.tool_set; HeadMoves.append_message)."""
        return await self._ledger.head.append_message(
            self.session_id, "user", content, blocks=blocks, predecessor_id=predecessor_id,
            caller_id=self._caller_id, metadata=metadata, side_branch=self._side_branch,
            advance_head=self.advance_head, offer_tools=tools_to_check is not None,
            tools_to_check=tools_to_check or ())

    async def results(self, results: Sequence[Any],
                      metadata: Mapping[str, Any] | None = None,
                      tools_to_check: Sequence[str] | None = None) -> Appended:
        """The agent loop's opening node: tool results answering HEAD's open tool uses
        (`tools_to_check` as for `open`)."""
        self._require_user_turn("submit tool results")
        if _none_or_repeated(results):
            await self._refuse_answers(results)
        return await self._ledger.head.append_message(
            self.session_id, "tool", blocks=results, metadata=metadata,
            offer_tools=tools_to_check is not None, tools_to_check=tools_to_check or ())

    async def _refuse_answers(self, results: Sequence[Any]) -> None:
        """No results, or one answered twice: BAD_INPUT naming what HEAD leaves open."""
        open_ids = _open_ids(await self._head())
        given = "no results" if not results else "a result twice for one tool use"
        if not open_ids:
            raise BadInput(f"submitToolResults got {given}, and HEAD has no open tool uses: "
                           "there is nothing to answer")
        raise BadInput(f"submitToolResults got {given}; HEAD's open tool uses "
                       f"({some(open_ids)}) need one result each", open_tool_use_ids=open_ids)

    async def _head(self) -> Node:
        return await self._ledger.nodes.get((await self._ledger.sessions.get(
            self.session_id)).head_id)

    async def cancel_open_tool_uses(self) -> Appended | None:
        """Answers HEAD's open tool uses, if any, as cancelled (is_error results, stored)."""
        self._require_user_turn("cancel tool uses")
        head = await self._head()
        open_ids = _open_ids(head)
        if not open_ids:
            return None
        return await self._ledger.head.append_message(
            self.session_id, "tool", predecessor_id=head.id,
            metadata={"cancelled_tool_uses": open_ids}, blocks=[
                {"type": "tool_result", "tool_use_id": use_id, "is_error": True,
                 "content": CANCELLED} for use_id in open_ids])

    async def open_edit(self, node_id: str, content: str | None,
                        blocks: Sequence[Any] | None = None,
                        tools_to_check: Sequence[str] | None = None) -> Appended:
        """Edit: the opening node is a new sibling of user message `node_id` (a user move);
        `tools_to_check` as for `open`."""
        self._require_user_turn("edit")
        return await self._ledger.head.edit(node_id, content, blocks=blocks,
                                            offer_tools=tools_to_check is not None,
                                            tools_to_check=tools_to_check or ())

    async def reply(self, predecessor_id: str, content: str | None,
                    blocks: Sequence[Any] | None, call: CallRecord,
                    metadata: Mapping[str, Any]) -> Appended:
        """The model's reply, written with the call that produced it, in one transaction."""
        return await self._ledger.head.append_message(
            self.session_id, "assistant", content, blocks=blocks, predecessor_id=predecessor_id,
            caller_id=self._caller_id, metadata=metadata, advance_head=self.advance_head,
            call=call)

    async def retry_reply(self, node_id: str, content: str | None,
                          blocks: Sequence[Any] | None, call: CallRecord,
                          metadata: Mapping[str, Any]) -> Appended:
        """Retry: the new reply is a sibling of `node_id`, and HEAD moves onto it (a user move)."""
        self._require_user_turn("retry")
        return await self._ledger.head.retry(node_id, content, blocks=blocks, metadata=metadata,
                                             call=call)

    async def answerable_head(self) -> Node:
        """HEAD, when the model can answer it as it stands: a user message or tool results."""
        self._require_user_turn("begin a turn at HEAD")
        head = await self._head()
        if head.role not in (Role.USER, Role.TOOL):
            what = "ROOT" if head.role is Role.SYSTEM else f"a {head.role.value} message"
            raise BadInput(f"HEAD ({head.id}) is {what}: there is nothing for the model to "
                           "answer; begin the turn with a message or tool results")
        return head

    async def draft_reply(self, draft_id: str, client_key: str, content: str | None,
                          blocks: Sequence[Any] | None, call: CallRecord,
                          metadata: Mapping[str, Any], keep_until: datetime) -> Appended:
        """completeTurn's reply after its draft's tip, with its call, in one transaction;
        HEAD advances only when the tip is still HEAD (append's rule)."""
        self._require_user_turn("complete a draft")
        return await self._ledger.head.complete_draft(
            draft_id, client_key, content, blocks=blocks, metadata=metadata, call=call,
            keep_until=keep_until)

    async def failed_attempt(self, draft_id: str, client_key: str, call: CallRecord,
                             keep_until: datetime) -> Call:
        """completeTurn's failed call: recorded for the draft under `client_key`; no node is
        written, HEAD is untouched, the draft stays open."""
        return await self._ledger.drafts.fail(draft_id, client_key, call, keep_until)

    async def failed(self, call: CallRecord) -> Call:
        """The error path: the failed call is recorded; no node is written, HEAD is untouched."""
        return await self._ledger.calls.record(self.session_id, call)

    def _require_user_turn(self, move: str) -> None:
        if not self.advance_head:
            raise BadInput(f"a spawned turn cannot {move}: that would move the user's HEAD")


def _open_ids(head: Node) -> list[str]:
    return tool_use_ids(head.blocks) if head.role is Role.ASSISTANT else []


def _none_or_repeated(results: Sequence[Any]) -> bool:
    """No results at all, or a tool_use_id named twice (the checks of the blocks refuse
    every other malformed answer with a message of their own)."""
    if isinstance(results, (str, bytes)) or not isinstance(results, Sequence):
        return False
    ids = [r.get("tool_use_id") for r in results if isinstance(r, Mapping)]
    return not results or len(set(map(repr, ids))) < len(ids)
