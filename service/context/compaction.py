"""The compaction pipeline (docs/concepts/what-the-model-reads.md): one
function behind all three triggers.

manual  — `compact()` (the `compact` mutation and `ctxdag compact`);
auto    — `compact_if_over_budget()` before a turn whose prompt reaches the budget policy's
          threshold (CTXDAG_AUTO_COMPACT_RATIO of the context window, 80 % by default);
passive — `with_passive_compaction()` when the provider reports a context overflow:
          compact, retry the call once; a second overflow is a clear error.

A manual compaction may also choose its cut (`up_to`: through a turn of the head's render)
and may be a preview (`dry_run`): `_plan` decides the cut for every run, `_run` persists it,
and a preview stops after the summarizer, writing nothing.

Only the manual trigger takes focus instructions (`compact(..., instructions=...)`): they
are handed to the summarizer and stored on the summary node. Auto and passive compaction
have none.

Compaction writes one summary node (with its summarizer call) in one transaction and
never moves HEAD. Once `compaction_started` is stored, exactly one of
`compaction_finished` (stored with the summary, in its transaction) or
`compaction_failed` follows, whatever fails — the summarizer, the write, or recording the
failed summarizer call — unless the database takes no write at all any more.

Under the segmented strategy a compaction whose stand-ins then pass the budget's merge point
is followed, in the same run, by a merge (context/nesting.py): one nested summary of the
oldest stand-ins, written with its own summarizer call and its own started/finished (or
failed) events. A failed merge leaves the compaction as written; the result says why.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum
from typing import Awaitable, Callable, Literal, Mapping, Sequence, TypeVar

from ..errors import BadInput, ContextOverflow, CtxdagError
from ..store import CallRecord, Ledger, Node, Rendered, Role, Summary, SummaryStrategy
from ..model import validate
from ..model.ids import utcnow
from ..tokens import estimate_tokens
from .. import telemetry
from .budget import BudgetPolicy
from .cut import MIN_ENTRIES, Cut, cut_after, find_cut, open_tool_uses, verbatim_ids
from .nesting import merge_run
from .render import render_context
from .summarizers import Conversation, RequestOptions, Summarizer, SummaryText, summary_call
from .tokens import HeuristicEstimator, TokenEstimator

T = TypeVar("T")
# The session's request options at a head (service/turns/tool_sets.offered): the tool set
# in force there, for a compaction no turn handed options to.
ToolsInForce = Callable[[str, str], Awaitable[RequestOptions]]
CompactionTrigger = Literal["manual", "auto", "passive"]

log = logging.getLogger("ctxdag.compaction")

LOCAL_COMMAND_HINT = "nothing to compact yet"
SPLIT_TURN = ("no user turn opens a tail that fits, so the cut is inside the current turn: "
              "the retained tail opens on an assistant message after a complete tool pair")
SPLIT_AT = ("the cut chosen by upTo is inside a turn: what follows it (the retained tail, or the "
            "reply still to come to the head) opens on no user turn")


class CompactionStatus(str, Enum):
    COMPACTED = "COMPACTED"
    PREVIEWED = "PREVIEWED"  # a dry run: what would be written, written nowhere
    SKIPPED = "SKIPPED"
    FAILED = "FAILED"


@dataclass(frozen=True)
class CompactionResult:
    status: CompactionStatus
    session_id: str
    trigger: CompactionTrigger
    summary: Summary | None = None
    covered_count: int = 0  # real turns the active summary now covers
    tokens_before: int = 0
    tokens_after: int = 0
    message: str | None = None
    local_command: str | None = None  # a user-visible hint when nothing was compacted
    error_code: str | None = None
    split_turn: bool = False  # the retained tail opens inside a turn
    covered_ids: tuple[str, ...] = ()  # the turns the summary covers (would cover), in order
    retained_ids: tuple[str, ...] = ()  # the head's chain kept verbatim below the segment
    summary_text: str | None = None
    summarizer_input_tokens: int | None = None  # the summarizer call's cost, as it reports it
    summarizer_output_tokens: int | None = None
    # Segmented: the nested summary the compaction's merge wrote (None: no merge ran, or it
    # failed: then `merge_error` says why).
    nested: Summary | None = None
    merge_error: str | None = None


@dataclass(frozen=True)
class Plan:
    """A compaction decided and not yet summarized: the cut of a rendered history."""

    covered: tuple[Node, ...]  # the rendered entries the summary stands in for
    retained: tuple[Node, ...]
    previous: Node | None  # the summary relayed and absorbed, when the view led with one
    new_turns: tuple[Node, ...]  # real turns newly covered
    covers_ids: tuple[str, ...]  # the previous segment (when read), then new_turns
    split_turn: bool
    message: str | None
    # The covered entries rendered after the new summary all the same (pinned turns with the
    # other halves of their tool pairs), ids.
    verbatim: frozenset[str] = frozenset()
    # Segmented, `upTo` in turns rendered verbatim between two stand-ins (an undone segment):
    # the summary covers that gap only, so its compacted head is its own last turn and it
    # retains nothing (what follows is the later stand-ins' and the tail's).
    gap: bool = False

    @property
    def compacted_head_id(self) -> str | None:
        return self.new_turns[-1].id if self.gap else None

    def tokens_after(self, view: Rendered, written: SummaryText) -> int:
        gone = sum(n.tokens for n in self.covered if n.id not in self.verbatim)
        return view.tokens - gone + estimate_tokens(written.text)

    def outcome(self, written: SummaryText) -> dict:
        """The result's account of what is (or would be) written."""
        return {"covered_ids": self.covers_ids,
                "retained_ids": tuple(n.id for n in self.retained),
                "summary_text": written.text, "summarizer_input_tokens": written.input_tokens,
                "summarizer_output_tokens": written.output_tokens}


class Compactor:
    def __init__(self, ledger: Ledger, summarizer: Summarizer, policy: BudgetPolicy,
                 estimator: TokenEstimator, *,
                 tools_in_force: ToolsInForce | None = None) -> None:
        self.ledger = ledger
        self.summarizer = summarizer
        self.policy = policy
        self.estimator = estimator
        self.tools_in_force = tools_in_force

    async def compact(self, session_id: str, *, head_id: str | None = None,
                      keep_recent_tokens: int | None = None,
                      trigger: CompactionTrigger = "manual",
                      instructions: str | None = None, up_to: str | None = None,
                      dry_run: bool = False,
                      options: RequestOptions | None = None) -> CompactionResult:
        """Compacts the branch of `head_id` (default: HEAD's branch).

        `instructions`: the user's focus instructions for the summarizer (at most
        validate.MAX_INSTRUCTIONS_LENGTH characters, not blank), stored on the summary.
        `up_to`: a turn of the head's rendered history; the cut covers the history
        through it instead of where `keep_recent_tokens` would put it (not both).
        `dry_run`: the summarizer runs and the result says what would be written, but
        nothing is (no node, no call, no event): status PREVIEWED.
        `options`: the request options the conversation's calls are sent with (tools
        above all), so a summarizer that reads the conversation sends its very prefix.
        """
        instructions = validate.instructions(instructions)
        if up_to is not None:
            validate.identifier(up_to, "upTo")
            if keep_recent_tokens is not None:
                raise BadInput("give keepRecentTokens or upTo, not both: upTo chooses the cut")
        view = await render_context(self.ledger, session_id, head_id)
        options = await self._offered(session_id, view, options)
        return await self._run(view, session_id, trigger, keep_recent_tokens, instructions,
                               up_to=up_to, dry_run=dry_run, options=options)

    async def compact_if_over_budget(self, session_id: str, pending_tokens: int = 0,
                                     head_id: str | None = None,
                                     view: Rendered | None = None,
                                     options: RequestOptions | None = None,
                                     media: Mapping[str, str] | None = None
                                     ) -> CompactionResult | None:
        """Auto trigger: compacts when the prompt about to be sent reaches the threshold.

        `view`: the head's render, when the caller has it already (a turn renders once
        and sends that render unless a compaction changed it); `media`: the data of the
        media it names, when the caller has read them (a turn sends them)."""
        if view is None:
            view = await render_context(self.ledger, session_id, head_id)
        if media is None:
            media = await self.ledger.nodes.media_of(view.nodes)
        options = await self._offered(session_id, view, options)
        estimate = await self._count(session_id, view, media, options) + pending_tokens
        if not self.policy.needs_compaction(estimate):
            return None
        return await self._run(view, session_id, "auto", None, None, options=options)

    async def with_passive_compaction(
        self, session_id: str, call: Callable[[], Awaitable[T]], head_id: str | None = None,
        options: RequestOptions | None = None,
    ) -> tuple[T, CompactionResult | None]:
        """Passive trigger: runs `call` (which renders afresh); on overflow compacts, retries once.

        Returns the call's value and the compaction that made room, if one ran.
        """
        try:
            return await call(), None
        except ContextOverflow as overflow:
            result = await self.compact(session_id, head_id=head_id, trigger="passive",
                                        options=options)
            if result.status is not CompactionStatus.COMPACTED:
                raise ContextOverflow(
                    f"the prompt does not fit the model's context and compaction could not "
                    f"shrink it ({result.message})", provider_message=overflow.message,
                ) from overflow
        try:
            return await call(), result
        except ContextOverflow as again:
            raise ContextOverflow(
                "the prompt still does not fit the model's context after compaction; "
                "retry with a smaller keep_recent_tokens or a larger context window",
                provider_message=again.message,
            ) from again

    async def _plan(self, view: Rendered, session_id: str, trigger: CompactionTrigger,
                    keep_recent_tokens: int | None, up_to: str | None, *, coverage: bool
                    ) -> "Plan | CompactionResult":
        """Where the compaction cuts: the one decision, shared by a preview and the real
        run. A skipped result when there is nothing to cover; BadInput for an `up_to`
        that cannot be a cut. `coverage`: read the previous summary's segment, so that the
        plan's covers_ids is whole (a real run without `up_to` learns it from the write)."""
        keep = self.policy.keep_recent_tokens if keep_recent_tokens is None else keep_recent_tokens
        if keep < 0:
            raise BadInput("keep_recent_tokens must not be negative")
        history, lead, verbatim = view.history, view.lead, verbatim_ids(view)
        # The summary the render shows is relayed and absorbed, wherever it stands (after a
        # switch from segmented, turns an earlier segment held render before it). Segmented
        # relays nothing: the new summary stands beside the earlier ones, written from the
        # newly covered turns alone (docs/segmented.md).
        previous = history[view.last_stand_in] if view.summary_id is not None \
            and view.strategy != SummaryStrategy.SEGMENTED.value else None
        # Where what this compaction covers starts: the relayed summary, else the first turn
        # after the last stand-in and its pins; what renders before stays as it is.
        start = view.last_stand_in if previous is not None else lead
        previous_covers = (await self.ledger.summaries.get(previous.id)).covers_ids \
            if previous and (coverage or up_to is not None) else ()
        if up_to is not None and view.strategy == SummaryStrategy.SEGMENTED.value:
            gap = await self._gap_plan(view, up_to)
            if gap is not None:
                return gap
        # A point that cannot be a cut is refused whatever the history's length.
        chosen = None if up_to is None else self._cut_at(view, up_to, previous, previous_covers)
        if len(history) < MIN_ENTRIES:
            return self._skipped(session_id, trigger, view,
                                 f"nothing to compact: the history has {len(history)} entries "
                                 f"(at least {MIN_ENTRIES} are needed)")
        # Pins count toward the cut: the retained tail and every pinned turn must fit.
        cut = find_cut(history, keep, lead=lead, verbatim=verbatim) if chosen is None \
            else chosen
        if cut.index is None:
            return self._skipped(session_id, trigger, view,
                                 "nothing to compact: every cut would separate a tool use "
                                 "from its result")
        covered, retained = history[start:cut.index], history[cut.index:]
        new_turns = tuple(history[lead:cut.index])  # after the summary and its pinned turns
        if not new_turns:
            return self._skipped(session_id, trigger, view,
                                 f"nothing to compact: the retained turns already fit in "
                                 f"{keep} tokens")
        message = (SPLIT_TURN if up_to is None else SPLIT_AT) if cut.split_turn else None
        return Plan(tuple(covered), tuple(retained), previous, new_turns,
                    tuple(previous_covers) + tuple(n.id for n in new_turns),
                    cut.split_turn, message,
                    frozenset(n.id for n in covered if n.id in verbatim))

    async def _gap_plan(self, view: Rendered, up_to: str) -> "Plan | None":
        """Segmented, `up_to` before the last stand-in: the plan covering the verbatim turns
        between the stand-ins around it, through `up_to`; BadInput when `up_to` lies inside a
        stand-in's segment; None when it is not before the last stand-in (the usual cut)."""
        history, lead = view.history, view.lead
        if any(n.id == up_to for n in history[lead:]):
            return None
        index = next((i for i, n in enumerate(history[:lead]) if n.id == up_to), None)
        if index is None:
            covering = (await self.ledger.summaries.covering_many([up_to])).get(up_to, [])
            standing = [s for s in covering if s in view.stand_in_ids]
            if standing:
                raise BadInput(f"upTo {up_to} lies inside the segment of summary "
                               f"{standing[0]}, which already stands in for it: choose a turn "
                               "after the last summary, or one rendered verbatim between two")
            return None
        if history[index].role is Role.SUMMARY:
            raise BadInput(f"upTo {up_to} is a summary: choose a turn")
        before = max((i for i in range(index) if history[i].id in view.stand_in_ids),
                     default=None)
        segment = () if before is None else \
            (await self.ledger.summaries.get(history[before].id)).covers_ids
        start = 0 if before is None else before + 1
        while start < index and history[start].id in segment:
            start += 1  # the stand-in's own pinned turns follow it
        if history[index].id in segment:
            raise BadInput(f"upTo {up_to} lies inside the segment of summary "
                           f"{history[before].id} (pinned, it renders after it): choose a "
                           "turn after the last summary, or one rendered verbatim between two")
        covered = tuple(history[start:index + 1])
        open_ids = open_tool_uses(covered, len(covered))
        if open_ids:
            raise BadInput(f"upTo {up_to} would separate tool uses from their results "
                           f"({validate.some(open_ids)}): choose the message that answers them")
        verbatim = frozenset(n.id for n in covered if n.id in view.pinned_ids)
        return Plan(covered, (), None, covered, tuple(n.id for n in covered), False, None,
                    verbatim, gap=True)

    @staticmethod
    def _cut_at(view: Rendered, up_to: str, previous: Node | None,
                previous_covers: Sequence[str]) -> Cut:
        history = view.history
        cut = cut_after(history, up_to, view.lead)
        if cut is None:
            if up_to in previous_covers or (previous and up_to == previous.id):
                raise BadInput(f"upTo {up_to} lies inside the current summary's segment "
                               f"(summary {previous.id} covers it): choose a turn after it")
            raise BadInput(f"upTo {up_to} is not a turn on the chain of head {view.head_id}")
        open_ids = open_tool_uses(history, cut.index)
        if open_ids:
            raise BadInput(f"upTo {up_to} would separate tool uses from their results "
                           f"({validate.some(open_ids)}): choose the message that answers them")
        return cut

    async def _run(self, view: Rendered, session_id: str, trigger: CompactionTrigger,
                   keep_recent_tokens: int | None, instructions: str | None, *,
                   up_to: str | None = None, dry_run: bool = False,
                   options: RequestOptions | None = None) -> CompactionResult:
        plan = await self._plan(view, session_id, trigger, keep_recent_tokens, up_to,
                                coverage=dry_run)
        if isinstance(plan, CompactionResult):
            return plan
        conversation = await self._conversation(view, plan, options)
        if dry_run:
            return await self._preview(view, session_id, trigger, plan, instructions,
                                       conversation)
        previous, new_turns, covered, retained = (plan.previous, plan.new_turns, plan.covered,
                                                  plan.retained)
        await self.ledger.events.append(session_id, {"type": "compaction_started",
                                                     "trigger": trigger})
        # What enters the summarizer's prompt, in order: the relayed summary, then the turns
        # (or the whole render, for a summarizer that sends the conversation's request).
        prompt = (list(view.nodes) if conversation is not None
                  else ([previous] if previous else []) + list(new_turns))
        started = utcnow()
        written = None
        try:
            written = await self._summarize(plan, instructions, conversation)
            tokens_after = plan.tokens_after(view, written)
            call = summary_call(self.summarizer.name, prompt, started, written,
                                conversation=conversation, head_id=view.head_id)
            # Imported replies kept out of the context inside the segment are covered too.
            summary = await self.ledger.summaries.persist(
                session_id, view.chain_ids([n.id for n in new_turns],
                                           through_end=not retained and not plan.gap),
                written.text,
                absorbed_id=previous.id if previous else None,
                compacted_head_id=plan.compacted_head_id or view.head_id,
                retained_ids=view.chain_ids([n.id for n in retained], through_end=True)
                if retained else [],
                expected_version=view.summary_version, strategy=view.strategy,
                metadata={"summarizer": written.summarizer, "model": written.model,
                          "trigger": trigger, "input_tokens": written.input_tokens,
                          "output_tokens": written.output_tokens},
                call=call, instructions=instructions,
                announce={"trigger": trigger, "tokens_before": view.tokens,
                          "tokens_after": tokens_after},
            )
            self._export(session_id, call, prompt, written)
        except CtxdagError as e:
            # The summarizer call happened (or was attempted): its record outlives the failure.
            # Recording can fail too (Neo4j down): the failure is announced all the same, and
            # the recording's error is what the caller sees.
            try:
                failed = summary_call(self.summarizer.name, prompt, started, written, e,
                                      conversation=conversation, head_id=view.head_id)
                await self.ledger.calls.record(session_id, failed)
                self._export(session_id, failed, prompt, written)
            finally:
                await self._failed(session_id, trigger, e.message, e.code)
            return CompactionResult(CompactionStatus.FAILED, session_id, trigger,
                                    tokens_before=view.tokens, tokens_after=view.tokens,
                                    message=e.message, error_code=e.code)
        except BaseException:
            await self._failed(session_id, trigger, "internal error", "INTERNAL")
            raise
        nested, merge_error = (await self._merge(view, session_id, trigger, summary,
                                                 tokens_after)
                               if view.strategy == SummaryStrategy.SEGMENTED.value
                               else (None, None))
        return CompactionResult(CompactionStatus.COMPACTED, session_id, trigger, summary,
                                len(summary.covers_ids), view.tokens, tokens_after,
                                split_turn=plan.split_turn, message=plan.message,
                                **{**plan.outcome(written), "covered_ids": summary.covers_ids},
                                nested=nested, merge_error=merge_error)

    async def _merge(self, view: Rendered, session_id: str, trigger: CompactionTrigger,
                     written: Summary, tokens_before: int
                     ) -> tuple[Summary | None, str | None]:
        """After segmented compaction `written` of `view`: when the stand-ins pass the merge
        point, merges the oldest into a nested summary; (nested, None), (None, why it
        failed), or (None, None) when no merge was due."""
        merge_at = self.policy.segment_merge_at
        earlier = [n for n in view.history if n.id in view.stand_in_ids]
        if sum(n.tokens for n in earlier) + written.node.tokens <= merge_at:
            return None, None  # decided without a read
        after = await render_context(self.ledger, session_id, view.head_id)
        run = merge_run(await self.ledger.summaries.get_many(after.stand_in_ids), merge_at)
        if not run:
            return None, None
        await self.ledger.events.append(session_id, {"type": "compaction_started",
                                                     "trigger": trigger})
        prompt = [s.node for s in run]
        started, text = utcnow(), None
        try:
            text = await self.summarizer.merge(prompt)
            covered = [turn for s in run for turn in s.covers_ids]
            call = summary_call(self.summarizer.name, prompt, started, text)
            nested = await self.ledger.summaries.persist(
                session_id, covered, text.text, absorbed_id=None,
                compacted_head_id=covered[-1], retained_ids=[],
                expected_version=after.summary_version, strategy=view.strategy,
                metadata={"summarizer": text.summarizer, "model": text.model,
                          "trigger": trigger, "merged": len(run),
                          "input_tokens": text.input_tokens, "output_tokens": text.output_tokens},
                call=call, nested_ids=[s.id for s in run],
                announce={"trigger": trigger, "tokens_before": tokens_before,
                          "tokens_after": tokens_before - sum(n.tokens for n in prompt)
                          + estimate_tokens(text.text)})
            self._export(session_id, call, prompt, text)
        except CtxdagError as e:
            try:
                failed = summary_call(self.summarizer.name, prompt, started, text, e)
                await self.ledger.calls.record(session_id, failed)
                self._export(session_id, failed, prompt, text)
            finally:
                await self._failed(session_id, trigger, e.message, e.code)
            return None, f"the merge into a nested summary failed: {e.message}"
        except BaseException:
            await self._failed(session_id, trigger, "internal error", "INTERNAL")
            raise
        return nested, None

    async def _preview(self, view: Rendered, session_id: str, trigger: CompactionTrigger,
                       plan: "Plan", instructions: str | None,
                       conversation: Conversation | None) -> CompactionResult:
        """What `_run` would write, written nowhere: the summarizer's failure is the
        caller's error, as no compaction_failed event may announce it."""
        written = await self._summarize(plan, instructions, conversation)
        return CompactionResult(CompactionStatus.PREVIEWED, session_id, trigger, None,
                                len(plan.covers_ids), view.tokens,
                                plan.tokens_after(view, written), split_turn=plan.split_turn,
                                message=plan.message, **plan.outcome(written))

    async def _summarize(self, plan: "Plan", instructions: str | None,
                         conversation: Conversation | None) -> SummaryText:
        extra = {} if conversation is None else {"conversation": conversation}
        return await self.summarizer.summarize(
            list(plan.new_turns), plan.previous.content if plan.previous else None,
            instructions=instructions, verbatim=plan.verbatim, **extra)

    async def _offered(self, session_id: str, view: Rendered,
                       options: RequestOptions | None) -> RequestOptions | None:
        """The request options the conversation's calls are sent with: the caller's (a turn
        resolved them), else the session's tool set in force at the head."""
        if options is not None or self.tools_in_force is None:
            return options
        return await self.tools_in_force(session_id, view.head_id)

    async def _conversation(self, view: Rendered, plan: "Plan",
                            options: RequestOptions | None) -> Conversation | None:
        """The conversation's request, for a summarizer that sends it (None for others, and
        for a head whose tool uses are open: no request ends in them)."""
        if not getattr(self.summarizer, "reads_conversation", False) or plan.gap or \
                open_tool_uses(view.nodes, len(view.nodes)):
            return None  # (a gap between stand-ins: no instruction of the request names it)
        media = await self.ledger.nodes.media_of(view.nodes)
        # What renders before the covered entries stays (segmented: the earlier stand-ins).
        covered_from = plan.covered[0] if plan.covered[0] is not view.history[0] else None
        return Conversation(tuple(view.nodes), plan.retained, media, options, covered_from)

    async def _failed(self, session_id: str, trigger: CompactionTrigger, reason: str,
                      code: str) -> None:
        try:
            await self.ledger.events.append(session_id, {
                "type": "compaction_failed", "trigger": trigger, "reason": reason,
                "code": code})
        except CtxdagError as e:  # the database takes no write: the caller hears the cause
            log.warning("compaction_failed of %s not stored: %s", session_id, e.message)

    async def _count(self, session_id: str, view: Rendered, media: Mapping[str, str],
                     options: RequestOptions | None) -> int:
        """The prompt's tokens as the estimator counts them; a provider's count is a model
        call, exported as such (a local estimate is not)."""
        tools = options.tools if options is not None else ()
        if self.estimator.name == HeuristicEstimator.name or not telemetry.enabled():
            return await self.estimator.count(view.nodes, media, tools)
        started, tokens, error = utcnow(), None, None
        try:
            tokens = await self.estimator.count(view.nodes, media, tools)
            return tokens
        except CtxdagError as e:
            error = e
            raise
        finally:
            telemetry.export_count(self.ledger.tenant, session_id, self.estimator.name,
                                   getattr(self.estimator, "model", None),
                                   view.nodes, started, utcnow(),
                                   tokens=tokens, error=error)

    def _export(self, session_id: str, record: CallRecord, prompt: Sequence[Node],
                written: SummaryText | None) -> None:
        """The summarizer's call, once the ledger took its record."""
        telemetry.export_call(self.ledger.tenant, session_id, record, prompt=prompt,
                              reply=written.text if written else None)

    @staticmethod
    def _skipped(session_id: str, trigger: CompactionTrigger, view: Rendered,
                 message: str) -> CompactionResult:
        return CompactionResult(CompactionStatus.SKIPPED, session_id, trigger,
                                tokens_before=view.tokens, tokens_after=view.tokens,
                                message=message, local_command=LOCAL_COMMAND_HINT)
