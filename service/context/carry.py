"""Branch summaries (docs/concepts/annotations.md): a summary of the branch being left,
written as a carry node on the branch gone to.

`carry_over(from_id, into_id)` summarizes from_id's chain below its common ancestor with
into_id's chain (exclusive) and appends the summary after into_id as one node of role
`carry`, with CARRIES_OVER edges to the turns it summarizes and the summarizer's call
(reading exactly those turns) in the same transaction. It is a turn of the target's
chain, so the target renders it in place like any node and a later compaction covers it
like any turn; the source branch never changes. A checkout that summarizes the branch
it leaves is the same write from HEAD (`checkout=True`): the user's move, so HEAD goes
onto the carry node. A carry-over into another head leaves HEAD alone unless that head
is HEAD. The summarizer is the compaction's: offline by default, Anthropic's when set.

This is one of the user's explicit moves (spec §5), as a checkout is: the only HEAD
write outside the turn writer in service/context/ and service/turns/.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import CtxdagError
from ..store import CallRecord, Carried, Ledger, Purpose
from ..model import validate
from ..model.ids import utcnow
from .summarizers import Summarizer, SummaryText


@dataclass(frozen=True)
class CarryResult:
    carried: Carried
    summary: SummaryText


class Carrier:
    def __init__(self, ledger: Ledger, summarizer: Summarizer) -> None:
        self.ledger = ledger
        self.summarizer = summarizer

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
        started = utcnow()
        try:
            written = await self.summarizer.summarize_branch(turns, instructions=instructions)
        except CtxdagError as e:  # the call was made: its record outlives the failure
            await self.ledger.calls.record(session_id, CallRecord.of_prompt(
                Purpose.SUMMARIZE, self.summarizer.name, None, turns, started, utcnow(),
                error_code=e.code, error_message=e.message))
            raise
        call = CallRecord.of_prompt(Purpose.SUMMARIZE, written.summarizer, written.model,
                                    turns, started, utcnow(), input_tokens=written.input_tokens,
                                    output_tokens=written.output_tokens)
        carried = await self.ledger.head.carry_over(
            session_id, from_id, into_id, [n.id for n in turns], written.text,
            checkout=checkout, instructions=instructions, call=call,
            metadata={"summarizer": written.summarizer, "model": written.model,
                      "input_tokens": written.input_tokens,
                      "output_tokens": written.output_tokens})
        return CarryResult(carried, written)
