"""Branch summaries (docs/concepts/annotations.md): a summary of the branch being left,
written as a carry node on the branch gone to.

`carry_over(from_id, into_id)` summarizes from_id's chain below its common ancestor with
into_id's chain (exclusive) and appends the summary after into_id as one node of role
`carry`, with CARRIES_OVER edges to the turns it summarizes and the summarizer's call
(reading what its prompt held: below) in the same transaction. It is a turn of the target's
chain, so the target renders it in place like any node and a later compaction covers it
like any turn; the source branch never changes. A checkout that summarizes the branch
it leaves is the same write from HEAD (`checkout=True`): the user's move, so HEAD goes
onto the carry node. A carry-over into another head leaves HEAD alone unless that head
is HEAD. The summarizer is the compaction's: offline by default, Anthropic's when set.

A summarizer that `reads_conversation` (Anthropic's) is sent the request of the branch's
tip, as compaction's is sent its head's: the tip's render as messages (tool uses and results
as blocks, images as images) with the session's tool set in force at the tip (`tools_in_force`;
none there: no tools), the branch-summary instruction appended; its call reads that render
and names those tools. When the render does not end in the branch's turns verbatim (a
summary stands in for some of them), the request is ROOT and the branch's turns instead, so
the branch is read whole. The offline summarizer sends nothing: its call reads the branch's
turns alone and is offered no tools.

This is one of the user's explicit moves (spec §5), as a checkout is: the only HEAD
write outside the turn writer in service/context/ and service/turns/.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .. import telemetry
from ..errors import CtxdagError
from ..store import Carried, Ledger, Node, Role
from ..model import validate
from ..model.ids import utcnow
from .render import render_context
from .summarizers import Conversation, RequestOptions, Summarizer, SummaryText, summary_call
from .compaction import ToolsInForce


@dataclass(frozen=True)
class CarryResult:
    carried: Carried
    summary: SummaryText


class Carrier:
    def __init__(self, ledger: Ledger, summarizer: Summarizer, *,
                 tools_in_force: ToolsInForce | None = None) -> None:
        """`tools_in_force`: the session's request options at a head (the tool set in force
        there), as the compactor has them; None offers a conversation's summarizer no tools."""
        self.ledger = ledger
        self.summarizer = summarizer
        self.tools_in_force = tools_in_force

    async def carry_over(self, session_id: str, from_id: str, into_id: str, *,
                         instructions: str | None = None) -> CarryResult:
        """Summarizes the branch of `from_id` into a carry node after `into_id`."""
        return await self._carry(session_id, from_id, into_id, instructions, checkout=False)

    async def checkout(self, session_id: str, node_id: str, *,
                       instructions: str | None = None) -> CarryResult:
        """Checkout to `node_id`, carrying a summary of the branch HEAD leaves: HEAD ends
        on the carry node written after `node_id`."""
        validate.identifier(session_id, "session id")
        head_id = (await self.ledger.sessions.get(session_id)).head_id
        return await self._carry(session_id, head_id, node_id, instructions, checkout=True)

    async def _carry(self, session_id: str, from_id: str, into_id: str,
                     instructions: str | None, *, checkout: bool) -> CarryResult:
        instructions = validate.instructions(instructions, "summaryInstructions")
        turns = await self.ledger.carries.segment(session_id, from_id, into_id)
        conversation, head_id = await self._conversation(session_id, from_id, turns)
        # What enters the summarizer's prompt: the request it sends, or the turns alone.
        prompt = conversation.nodes if conversation is not None else turns
        extra = {} if conversation is None else {"conversation": conversation}
        started, written = utcnow(), None
        try:
            written = await self.summarizer.summarize_branch(turns, instructions=instructions,
                                                             **extra)
        except CtxdagError as e:  # the call was made: its record outlives the failure
            failed = summary_call(self.summarizer.name, prompt, started, None, e,
                                  conversation=conversation, head_id=head_id)
            await self.ledger.calls.record(session_id, failed)
            telemetry.export_call(self.ledger.tenant, session_id, failed, prompt=prompt)
            raise
        call = summary_call(self.summarizer.name, prompt, started, written,
                            conversation=conversation, head_id=head_id)
        carried = await self.ledger.head.carry_over(
            session_id, from_id, into_id, [n.id for n in turns], written.text,
            checkout=checkout, instructions=instructions, call=call,
            metadata={"summarizer": written.summarizer, "model": written.model,
                      "input_tokens": written.input_tokens,
                      "output_tokens": written.output_tokens})
        telemetry.export_call(self.ledger.tenant, session_id, call, prompt=prompt,
                              reply=written.text)
        return CarryResult(carried, written)

    async def _conversation(self, session_id: str, from_id: str, turns: Sequence[Node]
                            ) -> tuple[Conversation | None, str | None]:
        """The request of the branch's tip, for a summarizer that sends it (None for others):
        the tip's render when it ends in the branch's turns (those it renders: an imported
        reply kept out of the context is not), else ROOT and those turns; the tool set in
        force at the tip. With it, the head whose render it is (None: not a render)."""
        if not getattr(self.summarizer, "reads_conversation", False):
            return None, None
        view = await render_context(self.ledger, session_id, from_id)
        hidden = {hidden_id for hidden_id, _ in view.hidden}
        branch = [n for n in turns if n.id not in hidden] or list(turns)
        tail = view.nodes[len(view.nodes) - len(branch):]
        head_id: str | None = view.head_id
        if [n.id for n in tail] == [n.id for n in branch]:
            nodes = view.nodes
        else:  # a stand-in holds some of the branch: the branch whole after ROOT
            nodes = tuple(n for n in view.nodes[:1] if n.role is Role.SYSTEM) + tuple(branch)
            head_id = None
        opening = next(n for n in nodes if n.role is not Role.SYSTEM)
        options = await self._offered(session_id, from_id)
        media = await self.ledger.nodes.media_of(nodes)
        return Conversation(tuple(nodes), (), media, options,
                            None if opening.id == branch[0].id else branch[0]), head_id

    async def _offered(self, session_id: str, from_id: str) -> RequestOptions | None:
        if self.tools_in_force is None:
            return None
        return await self.tools_in_force(session_id, from_id)
