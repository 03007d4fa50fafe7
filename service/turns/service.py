"""Turns: send a message, retry, edit, spawn a sub-agent task, record an external call.

Every model call is recorded with a READ edge to every node of the prompt the
provider received — the rendered list, ROOT and any summary stand-in included.

Every turn is two steps, `_begin` (the prompt rendered, compacted first when it reaches
the budget, held as a Draft: drafts.py) and `_complete` (the reply written with its call)
or `_fail` (the failed call alone). The service's own model calls run between them;
`begin_turn` and `complete_turn` hand the same two steps to a runtime that calls its own
model (docs/guides/agent-runtimes.md, "Bring your own model"), its draft stored between
them until it expires.

A turn renders its prompt once. When the turn's opening node extends a tip whose render
this process remembers (context/render.py: RenderMemory), the prompt is that render plus
the new node, and the turn is two statements: the opening write and the reply with its
call. Otherwise one full render sits between them.

A turn given a `listener` (service/turns/streaming.py) is followed as it runs: each model
call's reply is told to it as the provider produces it. The listener only hears: the
turn's writes are the same with or without one.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Mapping, Sequence

from ..context.compaction import CompactionResult, CompactionStatus, Compactor
from ..context.render import RenderMemory, render_context
from ..errors import BadInput, Conflict, ContextOverflow, CtxdagError, ModelError, \
    ModelUnavailable, NotFound
from ..store.problems import Stale, ToolsToCheck
from ..model import validate
from ..store import Appended, Call, CallRecord, Ledger, Node, Purpose, Rendered, Role
from ..model.ids import utcnow
from ..model.blocks import message_blocks, tool_use_ids
from .providers import ModelProvider, ModelReply
from .requests import Options
from . import recall, tool_sets
from .streaming import TurnListener, answer as streamed_answer
from .writer import TurnWriter
from ..config import DEFAULT_DRAFT_TTL, DEFAULT_RECALL_BUDGET, MAX_DRAFT_TTL
from ..store.drafts import StoredDraft, client_key as checked_key
from .drafts import Draft
from .. import telemetry


@dataclass(frozen=True)
class TurnResult:
    user_node: Node | None  # the turn's opening node (None for a retry)
    reply: Node | None  # None when the model call failed
    call_id: str | None  # the call that produced the reply, or the failed call
    compaction: CompactionResult | None = None  # an auto or passive compaction the turn ran
    error: CtxdagError | None = None  # why there is no reply
    # The reply's recall tool uses the service answers with the runtime's results
    # (service/turns/recall.py): not the runtime's to answer.
    service_use_ids: tuple[str, ...] = ()
    head_moved: bool | None = None  # whether the reply moved HEAD onto it (None: no reply)
    replayed: bool = False  # completeTurn answered from an earlier completion's key

    @property
    def open_tool_use_ids(self) -> list[str]:
        """The tool uses the reply opens: the runtime answers them (submit_tool_results)."""
        if self.reply is None:
            return []
        return [i for i in tool_use_ids(self.reply.blocks) if i not in self.service_use_ids]


class Turns:
    def __init__(self, ledger: Ledger, compactor: Compactor, provider: ModelProvider,
                 renders: RenderMemory | None = None, *,
                 recall_budget_tokens: int = DEFAULT_RECALL_BUDGET,
                 draft_ttl_seconds: int = DEFAULT_DRAFT_TTL) -> None:
        self.ledger = ledger
        self.compactor = compactor
        self.provider = provider
        self.renders = RenderMemory() if renders is None else renders
        self.recall_budget_tokens = recall_budget_tokens
        self.draft_ttl_seconds = draft_ttl_seconds

    async def send_message(self, session_id: str, content: str | None = None, *,
                           blocks: Sequence[Any] | None = None, options: Options = Options(),
                           cancel_open_tool_uses: bool = False,
                           listener: TurnListener | None = None) -> TurnResult:
        """The user's turn: the message at HEAD, then the model's reply after it.

        HEAD may leave tool uses open (the reply before it called tools): then the message
        is refused, naming them, unless `cancel_open_tool_uses`, which first stores their
        answers as errors saying they were cancelled (stored, so the render stays a pure
        projection of stored nodes).
        """
        writer = TurnWriter(self.ledger, session_id, advance_head=True)
        opened, options = await self._open(writer, content, blocks, options,
                                           cancel_open_tool_uses)
        return await self._respond_to(writer, opened, Purpose.CHAT, options=options,
                                      listener=listener)

    async def submit_tool_results(self, session_id: str, results: Sequence[Any], *,
                                  options: Options = Options(),
                                  listener: TurnListener | None = None) -> TurnResult:
        """The agent loop's next step: the results answering HEAD's open tool uses, then the
        model's next reply (which may call tools again)."""
        writer = TurnWriter(self.ledger, session_id, advance_head=True)
        opened, options = await self._open_results(writer, results, options)
        return await self._respond_to(writer, opened, Purpose.CHAT, options=options,
                                      listener=listener)

    async def edit(self, node_id: str, content: str | None = None, *,
                   blocks: Sequence[Any] | None = None, options: Options = Options(),
                   listener: TurnListener | None = None) -> TurnResult:
        """A new version of a user message (a fork; HEAD moves to it), then the reply."""
        original = await self.ledger.nodes.get(node_id)
        writer = TurnWriter(self.ledger, original.session_id, advance_head=True)
        opened, options = await self._open_edit(writer, original, content, blocks, options)
        return await self._respond_to(writer, opened, Purpose.CHAT, options=options,
                                      listener=listener)

    async def retry(self, node_id: str, *, options: Options = Options(),
                    listener: TurnListener | None = None) -> TurnResult:
        """A new answer to the prompt that produced reply `node_id` (a fork; HEAD moves to it)."""
        original = await self.ledger.nodes.get(node_id)
        if original.role is not Role.ASSISTANT or original.predecessor_id is None:
            raise BadInput(f"node {node_id} is not an assistant reply; retry forks replies")
        writer = TurnWriter(self.ledger, original.session_id, advance_head=True)
        # The reply is written after its call, so the set is read before it: alongside the
        # prompt it answers, one round trip's wait for both.
        options, prompt_head = await asyncio.gather(
            tool_sets.offered(self.ledger, original.session_id, original.predecessor_id,
                              options),
            self.ledger.nodes.get(original.predecessor_id))
        await self._refuse_recall_clash(original.session_id, options)
        result = await self._respond(writer, prompt_head, Purpose.CHAT, retry_of=node_id,
                                     options=options, listener=listener)
        result = await self._recall_rounds(writer, result, Purpose.CHAT, True, options,
                                           listener)
        return replace(result, user_node=None)

    async def spawn_task(self, session_id: str, from_node_id: str, prompt: str, *,
                         deliver_to: str | None = None) -> TurnResult:
        """A sub-agent turn hanging off `from_node_id` (its CALLER); it never moves HEAD.

        The task reads the conversation up to `from_node_id` plus its prompt. It does
        not compact: a summary of a side branch would replace the session's active
        summary. With `deliver_to`, the reply is then sent into that other session as
        a message of its own — there the conversation grows and its HEAD advances.
        """
        validate.optional_identifier(deliver_to, "deliver_to session id")
        writer = TurnWriter(self.ledger, session_id, advance_head=False, side_branch=True,
                            caller_id=from_node_id)
        # The append reads the tool set in force at the task's root (from_node_id's chain).
        root = await writer.open(prompt, predecessor_id=from_node_id,
                                 metadata={"spawned_from": from_node_id}, tools_to_check=())
        result = await self._respond_to(writer, root, Purpose.TASK, compact=False,
                                        options=tool_sets.with_version(Options(), root.tool_set))
        if deliver_to is not None and result.reply is not None:
            await self.send_message(deliver_to, result.reply.content)
        return result

    async def begin_turn(self, session_id: str, content: str | None = None, *,
                         blocks: Sequence[Any] | None = None,
                         results: Sequence[Any] | None = None, options: Options = Options(),
                         cancel_open_tool_uses: bool = False,
                         ttl_seconds: int | None = None) -> Draft:
        """A runtime's turn, first step: the user's message (or tool results answering HEAD's
        open tool uses) at HEAD, then the render its own model is to read — compacted first
        when it reaches the budget — stored as a draft until `complete_turn` or its expiry.
        Without a message or results the draft answers HEAD as it stands (a user message or
        tool results: after an appendMessage, a failed call, a compaction). Nothing is
        written when the request is refused."""
        ttl = self.draft_ttl_seconds if ttl_seconds is None else ttl_seconds
        validate.count(ttl, "ttlSeconds", minimum=1)
        if ttl > MAX_DRAFT_TTL:
            raise BadInput(f"ttlSeconds is {ttl}; a draft waits at most {MAX_DRAFT_TTL} s")
        message = content is not None or blocks is not None
        if message and results is not None:
            raise BadInput("a turn begins with a message (content or blocks) or with tool "
                           "results, not both")
        if cancel_open_tool_uses and not message:
            raise BadInput("cancelOpenToolUses makes room for a message: give content or blocks")
        writer = TurnWriter(self.ledger, session_id, advance_head=True)
        if results is not None:
            opened, options = await self._open_results(writer, results, options)
        elif message:
            opened, options = await self._open(writer, content, blocks, options,
                                               cancel_open_tool_uses)
        else:
            options = await tool_sets.offered(self.ledger, session_id, None, options)
            await self._refuse_recall_clash(session_id, options)
            opened = None
        if opened is None:
            head, ready = await writer.answerable_head(), None
        else:
            head = opened.node
            ready = self.renders.extend(self.ledger.tenant, session_id, opened)
        begun = await self._begin(writer, head, Purpose.CHAT, ready=ready, options=options)
        if isinstance(begun, TurnResult):  # the token count for the budget failed (recorded)
            raise begun.error
        self.renders.remember(self.ledger.tenant, session_id, begun.view)
        begun = replace(begun, opened=None if opened is None else opened.node)
        return replace(begun, stored=await self.ledger.drafts.open(begun.record(ttl)))

    async def complete_turn(self, draft_id: str, client_key: str, *, model: str,
                            content: str | None = None, blocks: Sequence[Any] | None = None,
                            usage: Mapping[str, Any] | None = None,
                            stop_reason: str | None = None, provider: str | None = None,
                            error: ModelError | None = None) -> TurnResult:
        """A runtime's turn, second step: its model's reply to draft `draft_id` (`content` or
        `blocks`), stored after the draft's tip with the call, which reads exactly what the
        draft's request held; or, with `error`, the failed call alone (the draft stays open
        for another attempt). HEAD moves onto the reply only when it is still the tip.

        `client_key` names the attempt: completing again with it returns what the first
        completion with it stored (`replayed`); a draft completed under another key is a
        CONFLICT, an unknown or expired one NOT_FOUND."""
        validate.identifier(draft_id, "draft id")
        checked_key(client_key)
        validate.name(model, "model")
        provider = "external" if provider is None else validate.name(provider, "provider")
        tokens = _usage(usage)
        if stop_reason is not None:
            validate.name(stop_reason, "stopReason")
        if error is not None:
            if content is not None or blocks is not None:
                raise BadInput("a completion is a reply (content or blocks) or an error, "
                               "not both")
            validate.error_message(error.message, self.ledger.limits)
        else:
            message_blocks(Role.ASSISTANT, content, blocks, self.ledger.limits)
        for _ in range(2):
            found = await self.ledger.drafts.get(draft_id, client_key)
            if found.attempt is not None:
                return await self._replayed(found)
            draft = Draft.of_record(found.record, found.opened)
            _refuse_closed(found, draft_id)
            writer = TurnWriter(self.ledger, draft.session_id, advance_head=True)
            # A runtime's call started once the draft was begun, and an attempt after a
            # failed one once that one ended: so a draft's attempts list in the order made.
            started = max(draft.created_at, found.last_finished_at or draft.created_at)
            try:
                if error is not None:
                    call_id = await self._fail(writer, draft, error, started, provider=provider,
                                               model=model, client_key=client_key)
                    return TurnResult(draft.opened, None, call_id, None, error)
                answer = ModelReply(content or "", model, tokens.get("input_tokens"),
                                    tokens.get("output_tokens"),
                                    {"provider": provider, "model": model},
                                    blocks=None if blocks is None else list(blocks),
                                    stop_reason=stop_reason,
                                    cache_creation_input_tokens=tokens.get(
                                        "cache_creation_input_tokens"),
                                    cache_read_input_tokens=tokens.get("cache_read_input_tokens"))
                reply, call = await self._complete(writer, draft, answer, provider=provider,
                                                   started_at=started, client_key=client_key)
            except Stale:
                continue  # completed under this key meanwhile: answered from that completion
            return TurnResult(draft.opened, reply.node, call.id, head_moved=reply.head_moved)
        raise Conflict(f"draft {draft_id} kept changing while it was completed; try again")

    async def _replayed(self, found: StoredDraft) -> TurnResult:
        """What the first completion under a key stored, as its TurnResult."""
        attempt = found.attempt
        if attempt.reply is not None:
            head = (await self.ledger.sessions.get(found.record.session_id)).head_id
            return TurnResult(found.opened, attempt.reply, attempt.call_id,
                              head_moved=head == attempt.reply.id, replayed=True)
        call = await self.ledger.calls.get(attempt.call_id)
        return TurnResult(found.opened, None, call.id,
                          error=_model_error(call.error_code, call.error_message or ""),
                          replayed=True)

    async def record_call(self, session_id: str, read_ids: Sequence[str], model: str,
                          output: str | None = None,
                          usage: Mapping[str, Any] | None = None, *,
                          output_blocks: Sequence[Any] | None = None) -> Call:
        """Records a call an external runtime made itself, exported as a span as the
        service's own calls are (service/telemetry: its read ids, its reply when messages
        are captured; no prompt, which would have to be read back).

        `read_ids` (prompt order) must be nodes of the session, each named once, at most
        `Limits.max_call_reads` of them. With `output`, the reply is appended after the
        last node read (HEAD advances if that node is HEAD); `output_blocks` is the reply
        as content blocks instead (tool uses included: the runtime then answers them).
        """
        validate.identifier(session_id, "session id")
        read_ids = validate.read_ids(read_ids, self.ledger.limits, Purpose.EXTERNAL)
        validate.name(model, "model")
        tokens = _usage(usage)
        now = utcnow()
        call = CallRecord(Purpose.EXTERNAL, "external", model, read_ids, now, now,
                          input_tokens=tokens.get("input_tokens"),
                          output_tokens=tokens.get("output_tokens"),
                          cache_creation_input_tokens=tokens.get("cache_creation_input_tokens"),
                          cache_read_input_tokens=tokens.get("cache_read_input_tokens"))
        if output is None and output_blocks is None:
            recorded = await self.ledger.calls.record(session_id, call)
            telemetry.export_call(self.ledger.tenant, session_id, call, request_model=model)
            return recorded
        writer = TurnWriter(self.ledger, session_id, advance_head=True)
        reply = await writer.reply(read_ids[-1], output, output_blocks, call,
                                   {"provider": "external", "model": model})
        telemetry.export_call(self.ledger.tenant, session_id, call, request_model=model,
                              reply=reply.node)
        return await self.ledger.calls.get(call.id)

    async def _open(self, writer: TurnWriter, content: str | None,
                    blocks: Sequence[Any] | None, options: Options,
                    cancel_open_tool_uses: bool) -> tuple[Appended, Options]:
        """The user's message at HEAD, and the options the turn's call is sent with.

        The tool set in force is read by the append itself (one round trip) unless the turn
        names tools or a toolChoice of its own, or first cancels open tool uses. When the
        set may name a recall tool the append writes nothing (ToolsToCheck): the set is read,
        the clash decided, and only then the message written, as a refused turn leaves
        nothing behind."""
        session_id = writer.session_id
        if tool_sets.read_with_the_append(options) and not cancel_open_tool_uses:
            try:
                opened = await writer.open(content, blocks=blocks,
                                           tools_to_check=tool_sets.to_check(options))
                return opened, tool_sets.with_version(options, opened.tool_set)
            except ToolsToCheck:
                pass
        options = await tool_sets.offered(self.ledger, session_id, None, options)
        await self._refuse_recall_clash(session_id, options)
        if cancel_open_tool_uses:
            # The message is checked first: a refused one must leave nothing behind.
            message_blocks(Role.USER, content, blocks, self.ledger.limits)
            await writer.cancel_open_tool_uses()
        return await writer.open(content, blocks=blocks), options

    async def _open_edit(self, writer: TurnWriter, original: Node, content: str | None,
                         blocks: Sequence[Any] | None,
                         options: Options) -> tuple[Appended, Options]:
        """The edited message, a sibling of `original`, and the options the turn's call is
        sent with: the tool set in force read by the edit's own write, as `_open` does."""
        if tool_sets.read_with_the_append(options):
            try:
                opened = await writer.open_edit(original.id, content, blocks,
                                                tools_to_check=tool_sets.to_check(options))
                return opened, tool_sets.with_version(options, opened.tool_set)
            except ToolsToCheck:
                pass
        options = await tool_sets.offered(self.ledger, original.session_id,
                                          original.predecessor_id, options)
        await self._refuse_recall_clash(original.session_id, options)
        return await writer.open_edit(original.id, content, blocks), options

    async def _open_results(self, writer: TurnWriter, results: Sequence[Any],
                            options: Options) -> tuple[Appended, Options]:
        """The runtime's tool results at HEAD (with the answers to HEAD's recall uses), and
        the options the turn's call is sent with: the tool set in force read by the same
        append when the turn names no tools of its own (as `_open`)."""
        results, metadata = await self._with_recall_answers(writer.session_id, results,
                                                            options)
        if tool_sets.read_with_the_append(options):
            opened = await writer.results(results, metadata, tools_to_check=())
            return opened, tool_sets.with_version(options, opened.tool_set)
        options = await tool_sets.offered(self.ledger, writer.session_id, None, options)
        return await writer.results(results, metadata), options

    async def _respond_to(self, writer: TurnWriter, opened: Appended, purpose: Purpose, *,
                          compact: bool = True, options: Options = Options(),
                          listener: TurnListener | None = None) -> TurnResult:
        """The rest of a turn whose opening node was just written."""
        result = await self._respond_opened(writer, opened, purpose, compact, options, listener)
        return await self._recall_rounds(writer, result, purpose, compact, options, listener)

    async def _respond_opened(self, writer: TurnWriter, opened: Appended, purpose: Purpose,
                              compact: bool, options: Options,
                              listener: TurnListener | None = None) -> TurnResult:
        ready = self.renders.extend(self.ledger.tenant, writer.session_id, opened)
        return await self._respond(writer, opened.node, purpose, ready=ready, compact=compact,
                                   options=options, listener=listener)

    async def _recall_rounds(self, writer: TurnWriter, result: TurnResult, purpose: Purpose,
                             compact: bool, options: Options,
                             listener: TurnListener | None = None) -> TurnResult:
        """While the reply calls recall tools only, the service answers and asks again."""
        first = result
        for _ in range(recall.MAX_RECALL_ROUNDS):
            if result.reply is None or not result.service_use_ids or result.open_tool_use_ids:
                break
            blocks, metadata = await recall.answered(self.ledger, result.reply, (),
                                                     self.recall_budget_tokens)
            opened = await writer.results(blocks, metadata)
            result = await self._respond_opened(writer, opened, purpose, compact, options,
                                                listener)
        if result.open_tool_use_ids == [] and result.service_use_ids:
            result = replace(result, service_use_ids=())  # rounds spent: the runtime asks on
        return replace(result, user_node=first.user_node,
                       compaction=result.compaction or first.compaction)

    async def _refuse_recall_clash(self, session_id: str, options: Options) -> None:
        """A client tool named like a recall tool is BAD_INPUT, before the turn writes, when
        recall is on (the session is read only when such a tool is offered)."""
        if recall.clashes(options):
            recall.recall_options(options, (await self.ledger.sessions.get(session_id)).recall)

    async def _with_recall_answers(self, session_id: str, results: Sequence[Any],
                                   options: Options) -> tuple[list[Any], dict | None]:
        """The runtime's results, with the answers to HEAD's recall uses they leave open."""
        if options.recall is False:
            return list(results), None
        session = await self.ledger.sessions.get(session_id)
        if not (session.recall if options.recall is None else options.recall):
            return list(results), None
        head = await self.ledger.nodes.get(session.head_id)
        return await recall.answered(self.ledger, head, results, self.recall_budget_tokens)

    async def _respond(self, writer: TurnWriter, prompt_head: Node, purpose: Purpose, *,
                       ready: Rendered | None = None, retry_of: str | None = None,
                       compact: bool = True, options: Options = Options(),
                       listener: TurnListener | None = None) -> TurnResult:
        """The service's own turn after its opening node: both steps around its model call
        (a passive compaction between two attempts when the provider reports an overflow)."""
        begun = await self._begin(writer, prompt_head, purpose, ready=ready, retry_of=retry_of,
                                  compact=compact, options=options)
        if isinstance(begun, TurnResult):
            return begun
        draft: Draft | None = begun
        options, call_ids = begun.options, []

        async def call_model() -> Appended:
            nonlocal draft
            current, draft = draft, None  # a retry after a passive compaction drafts afresh
            if current is None:
                view = await render_context(self.ledger, writer.session_id, prompt_head.id)
                current = Draft.of(writer.session_id, purpose, view, begun.media, options,
                                   retry_of=retry_of)
            return await self._call_model(writer, current, call_ids, listener)

        compaction = begun.compaction
        try:
            if compact:
                reply, passive = await self.compactor.with_passive_compaction(
                    writer.session_id, call_model, head_id=prompt_head.id, options=options)
                compaction = passive or compaction
            else:
                reply = await call_model()
        except ModelError as error:
            return TurnResult(prompt_head, None, call_ids[-1] if call_ids else None,
                              begun.compaction, error)
        return TurnResult(prompt_head, reply.node, call_ids[-1], compaction,
                          service_use_ids=recall.service_uses(reply.node, options),
                          head_moved=reply.head_moved)

    async def _begin(self, writer: TurnWriter, prompt_head: Node, purpose: Purpose, *,
                     ready: Rendered | None = None, retry_of: str | None = None,
                     compact: bool = True, options: Options = Options()) -> Draft | TurnResult:
        """A turn's first step after its opening node: the render of `prompt_head` (`ready`
        when the turn extended a remembered one), compacted first when it reaches the
        budget, as a draft. A failed token count is recorded as the failed call (the
        TurnResult saying so)."""
        session_id = writer.session_id
        # One render serves the budget check and the prompt, unless a compaction changed it.
        if ready is None:
            ready = await render_context(self.ledger, session_id, prompt_head.id)
        options = recall.recall_options(options, ready.recall)
        # A compacted render holds a part of this one's nodes: the media read once serve all.
        media = await self.ledger.nodes.media_of(ready.nodes)
        draft = Draft.of(session_id, purpose, ready, media, options, retry_of=retry_of)
        if not compact:
            return draft
        started = utcnow()
        try:
            compaction = await self.compactor.compact_if_over_budget(
                session_id, head_id=prompt_head.id, view=ready, options=options, media=media)
        except ModelError as error:  # the provider's token count: the call failed
            failed = await self._fail(writer, draft, error, started)
            return TurnResult(prompt_head, None, failed, None, error)
        if compaction is not None and compaction.status is CompactionStatus.COMPACTED:
            view = await render_context(self.ledger, session_id, prompt_head.id)
            draft = Draft.of(session_id, purpose, view, media, options, retry_of=retry_of)
        return replace(draft, compaction=compaction)

    async def _call_model(self, writer: TurnWriter, draft: Draft, call_ids: list[str],
                          listener: TurnListener | None = None) -> Appended:
        """The service's own model answers the draft (told to `listener` as it comes, when
        the turn is followed); its reply (or failure) completes it."""
        self.renders.remember(self.ledger.tenant, writer.session_id, draft.view)
        started = utcnow()
        try:
            if listener is None:
                answer = await self.provider.complete(draft.prompt)
            else:
                answer = await streamed_answer(self.provider, draft.prompt, listener.call_started(
                    draft.head_id, len(draft.reads.ids)))
        except ModelError as error:
            call_ids.append(await self._fail(writer, draft, error, started))
            raise
        reply, call = await self._complete(writer, draft, answer, provider=self.provider.name,
                                           started_at=started)
        call_ids.append(call.id)
        return reply

    async def _complete(self, writer: TurnWriter, draft: Draft, answer: ModelReply, *,
                        provider: str, started_at: datetime,
                        client_key: str | None = None) -> tuple[Appended, CallRecord]:
        """A turn's second step: the reply to the draft, with the call that produced it,
        reading exactly what the draft's request held (one statement)."""
        call = draft.call(provider, answer.model, started_at, utcnow(),
                          input_tokens=answer.input_tokens, output_tokens=answer.output_tokens,
                          cache_creation_input_tokens=answer.cache_creation_input_tokens,
                          cache_read_input_tokens=answer.cache_read_input_tokens)
        metadata = {**answer.metadata, **({"stop_reason": answer.stop_reason}
                                          if answer.stop_reason else {})}
        content, blocks = (answer.text, None) if answer.blocks is None else (None, answer.blocks)
        if draft.stored is not None:
            reply = await writer.draft_reply(draft.id, client_key, content, blocks, call,
                                             metadata, self._kept_until(draft))
        elif draft.retry_of is not None:
            reply = await writer.retry_reply(draft.retry_of, content, blocks, call, metadata)
        else:
            reply = await writer.reply(draft.head_id, content, blocks, call, metadata)
        self.renders.extend(self.ledger.tenant, writer.session_id, reply)
        telemetry.export_call(self.ledger.tenant, writer.session_id, call,
                              request_model=answer.model if draft.stored else self.provider.model,
                              finish_reason=answer.stop_reason,
                              prompt=draft.view.nodes if draft.view else (), reply=reply.node)
        return reply, call

    async def _fail(self, writer: TurnWriter, draft: Draft, error: ModelError,
                    started: datetime, *, provider: str | None = None,
                    model: str | None = None, client_key: str | None = None) -> str:
        """A turn's second step when its model call failed: the failed call alone, reading
        the prompt it was to send, with the error; its id. Nothing else is written."""
        failed = draft.call(provider or self.provider.name, model or self.provider.model,
                            started, utcnow(), error_code=error.code,
                            error_message=error.message)
        if draft.stored is not None:
            recorded = await writer.failed_attempt(draft.id, client_key, failed,
                                                   self._kept_until(draft))
        else:
            recorded = await writer.failed(failed)
        telemetry.export_call(self.ledger.tenant, writer.session_id, failed,
                              request_model=failed.model,
                              prompt=draft.view.nodes if draft.view else ())
        return recorded.id

    def _kept_until(self, draft: Draft) -> datetime:
        """How long a completed draft is kept, so a repeated completion is answered."""
        return utcnow() + timedelta(seconds=draft.stored.ttl_seconds)


def _refuse_closed(found: StoredDraft, draft_id: str) -> None:
    """A draft completed under another key, or expired, takes no completion (the statement
    checks again under the session's lock)."""
    if found.completed_by is not None:
        raise Conflict(f"draft {draft_id} is completed already (call {found.completed_call_id}), "
                       "under another client key: a draft is answered once (begin a new turn "
                       "to ask again)", completed_call_id=found.completed_call_id)
    if found.record.expires_at <= utcnow():
        raise NotFound("draft", draft_id, f"draft {draft_id} expired before it was completed; "
                       "begin the turn again (beginTurn with no message answers HEAD as it "
                       "stands)")


_MODEL_ERRORS = {e.code: e for e in (ModelError, ModelUnavailable, ContextOverflow)}


def _model_error(code: str | None, message: str) -> ModelError:
    return _MODEL_ERRORS.get(code, ModelError)(message)


USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
              "cache_read_input_tokens")


def _usage(usage: Mapping[str, Any] | None) -> dict[str, int]:
    if usage is None:
        return {}
    if not isinstance(usage, Mapping):
        raise BadInput("usage must be an object like {\"input_tokens\": 10, \"output_tokens\": 5}")
    unknown = set(usage) - set(USAGE_KEYS)
    if unknown:
        names = sorted(map(validate.shown, unknown))
        raise BadInput(f"usage has unknown keys {validate.some(names)}")
    for key, value in usage.items():
        validate.count(value, f"usage.{key}")
    return dict(usage)
