"""Turns: send a message, retry, edit, spawn a sub-agent task, record an external call.

Every model call is recorded with a READ edge to every node of the prompt the
provider received — the rendered list, ROOT and any summary stand-in included.

A turn renders its prompt once. When the turn's opening node extends a tip whose render
this process remembers (context/render.py: RenderMemory), the prompt is that render plus
the new node, and the turn is two statements: the opening write and the reply with its
call. Otherwise one full render sits between them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Mapping, Sequence

from ..context.compaction import CompactionResult, CompactionStatus, Compactor
from ..context.render import RenderMemory, render_context
from ..errors import BadInput, CtxdagError, ModelError
from ..model import validate
from ..store import Appended, Call, CallRecord, Ledger, Node, Purpose, Rendered, Role
from ..model.ids import utcnow
from ..model.blocks import message_blocks, tool_use_ids
from .providers import ModelProvider, Prompt
from ..model.models import tools_json
from .requests import Options
from . import recall, tool_sets
from .writer import TurnWriter
from ..config import DEFAULT_RECALL_BUDGET
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

    @property
    def open_tool_use_ids(self) -> list[str]:
        """The tool uses the reply opens: the runtime answers them (submit_tool_results)."""
        if self.reply is None:
            return []
        return [i for i in tool_use_ids(self.reply.blocks) if i not in self.service_use_ids]


class Turns:
    def __init__(self, ledger: Ledger, compactor: Compactor, provider: ModelProvider,
                 renders: RenderMemory | None = None, *,
                 recall_budget_tokens: int = DEFAULT_RECALL_BUDGET) -> None:
        self.ledger = ledger
        self.compactor = compactor
        self.provider = provider
        self.renders = RenderMemory() if renders is None else renders
        self.recall_budget_tokens = recall_budget_tokens

    async def send_message(self, session_id: str, content: str | None = None, *,
                           blocks: Sequence[Any] | None = None, options: Options = Options(),
                           cancel_open_tool_uses: bool = False) -> TurnResult:
        """The user's turn: the message at HEAD, then the model's reply after it.

        HEAD may leave tool uses open (the reply before it called tools): then the message
        is refused, naming them, unless `cancel_open_tool_uses`, which first stores their
        answers as errors saying they were cancelled (stored, so the render stays a pure
        projection of stored nodes).
        """
        writer = TurnWriter(self.ledger, session_id, advance_head=True)
        options = await tool_sets.offered(self.ledger, session_id, None, options)
        await self._refuse_recall_clash(session_id, options)
        if cancel_open_tool_uses:
            # The message is checked first: a refused one must leave nothing behind.
            message_blocks(Role.USER, content, blocks, self.ledger.limits)
            await writer.cancel_open_tool_uses()
        opened = await writer.open(content, blocks=blocks)
        return await self._respond_to(writer, opened, Purpose.CHAT, options=options)

    async def submit_tool_results(self, session_id: str, results: Sequence[Any], *,
                                  options: Options = Options()) -> TurnResult:
        """The agent loop's next step: the results answering HEAD's open tool uses, then the
        model's next reply (which may call tools again)."""
        writer = TurnWriter(self.ledger, session_id, advance_head=True)
        options = await tool_sets.offered(self.ledger, session_id, None, options)
        results, metadata = await self._with_recall_answers(session_id, results, options)
        return await self._respond_to(writer, await writer.results(results, metadata),
                                      Purpose.CHAT, options=options)

    async def edit(self, node_id: str, content: str | None = None, *,
                   blocks: Sequence[Any] | None = None,
                   options: Options = Options()) -> TurnResult:
        """A new version of a user message (a fork; HEAD moves to it), then the reply."""
        original = await self.ledger.nodes.get(node_id)
        writer = TurnWriter(self.ledger, original.session_id, advance_head=True)
        options = await tool_sets.offered(self.ledger, original.session_id,
                                          original.predecessor_id, options)
        await self._refuse_recall_clash(original.session_id, options)
        return await self._respond_to(writer, await writer.open_edit(node_id, content, blocks),
                                      Purpose.CHAT, options=options)

    async def retry(self, node_id: str, *, options: Options = Options()) -> TurnResult:
        """A new answer to the prompt that produced reply `node_id` (a fork; HEAD moves to it)."""
        original = await self.ledger.nodes.get(node_id)
        if original.role is not Role.ASSISTANT or original.predecessor_id is None:
            raise BadInput(f"node {node_id} is not an assistant reply; retry forks replies")
        writer = TurnWriter(self.ledger, original.session_id, advance_head=True)
        options = await tool_sets.offered(self.ledger, original.session_id,
                                          original.predecessor_id, options)
        await self._refuse_recall_clash(original.session_id, options)
        prompt_head = await self.ledger.nodes.get(original.predecessor_id)
        result = await self._respond(writer, prompt_head, Purpose.CHAT, retry_of=node_id,
                                     options=options)
        result = await self._recall_rounds(writer, result, Purpose.CHAT, True, options)
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
        options = await tool_sets.offered(self.ledger, session_id, from_node_id)
        root = await writer.open(prompt, predecessor_id=from_node_id,
                                 metadata={"spawned_from": from_node_id})
        result = await self._respond_to(writer, root, Purpose.TASK, compact=False,
                                        options=options)
        if deliver_to is not None and result.reply is not None:
            await self.send_message(deliver_to, result.reply.content)
        return result

    async def record_call(self, session_id: str, read_ids: Sequence[str], model: str,
                          output: str | None = None,
                          usage: Mapping[str, Any] | None = None, *,
                          output_blocks: Sequence[Any] | None = None) -> Call:
        """Records a call an external runtime made itself.

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
            return await self.ledger.calls.record(session_id, call)
        writer = TurnWriter(self.ledger, session_id, advance_head=True)
        await writer.reply(read_ids[-1], output, output_blocks, call,
                           {"provider": "external", "model": model})
        return await self.ledger.calls.get(call.id)

    async def _respond_to(self, writer: TurnWriter, opened: Appended, purpose: Purpose, *,
                          compact: bool = True, options: Options = Options()) -> TurnResult:
        """The rest of a turn whose opening node was just written."""
        result = await self._respond_opened(writer, opened, purpose, compact, options)
        return await self._recall_rounds(writer, result, purpose, compact, options)

    async def _respond_opened(self, writer: TurnWriter, opened: Appended, purpose: Purpose,
                              compact: bool, options: Options) -> TurnResult:
        ready = self.renders.extend(self.ledger.tenant, writer.session_id, opened)
        return await self._respond(writer, opened.node, purpose, ready=ready, compact=compact,
                                   options=options)

    async def _recall_rounds(self, writer: TurnWriter, result: TurnResult, purpose: Purpose,
                             compact: bool, options: Options) -> TurnResult:
        """While the reply calls recall tools only, the service answers and asks again."""
        first = result
        for _ in range(recall.MAX_RECALL_ROUNDS):
            if result.reply is None or not result.service_use_ids or result.open_tool_use_ids:
                break
            blocks, metadata = await recall.answered(self.ledger, result.reply, (),
                                                     self.recall_budget_tokens)
            opened = await writer.results(blocks, metadata)
            result = await self._respond_opened(writer, opened, purpose, compact, options)
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
                       compact: bool = True, options: Options = Options()) -> TurnResult:
        session_id = writer.session_id
        compaction = None
        # One render serves the budget check and the prompt, unless a compaction changed it.
        if ready is None:
            ready = await render_context(self.ledger, session_id, prompt_head.id)
        options = recall.recall_options(options, ready.recall)
        # A compacted render holds a part of this one's nodes: the media read once serve all.
        media = await self.ledger.nodes.media_of(ready.nodes)
        if compact:
            started = utcnow()
            try:
                compaction = await self.compactor.compact_if_over_budget(
                    session_id, head_id=prompt_head.id, view=ready, options=options,
                    media=media)
            except ModelError as error:  # the provider's token count: the call failed
                failed = await self._failed(writer, purpose, ready, started, error, options)
                return TurnResult(prompt_head, None, failed, None, error)
            if compaction is not None and compaction.status is CompactionStatus.COMPACTED:
                ready = None
        call_ids: list[str] = []

        async def call_model() -> Node:
            nonlocal ready
            view, ready = ready, None  # a retry after a passive compaction renders afresh
            return await self._call_model(writer, prompt_head, purpose, retry_of, call_ids,
                                          view, media, options)

        try:
            if compact:
                reply, passive = await self.compactor.with_passive_compaction(
                    session_id, call_model, head_id=prompt_head.id, options=options)
                compaction = passive or compaction
            else:
                reply = await call_model()
        except ModelError as error:
            return TurnResult(prompt_head, None, call_ids[-1] if call_ids else None,
                              compaction, error)
        return TurnResult(prompt_head, reply, call_ids[-1], compaction,
                          service_use_ids=recall.service_uses(reply, options))

    async def _call_model(self, writer: TurnWriter, prompt_head: Node, purpose: Purpose,
                          retry_of: str | None, call_ids: list[str],
                          view: Rendered | None, media: Mapping[str, str],
                          options: Options) -> Node:
        if view is None:
            view = await render_context(self.ledger, writer.session_id, prompt_head.id)
        self.renders.remember(self.ledger.tenant, writer.session_id, view)
        prompt = Prompt(view.nodes, media, options)
        started = utcnow()
        try:
            answer = await self.provider.complete(prompt)
        except ModelError as error:
            call_ids.append(await self._failed(writer, purpose, view, started, error, options))
            raise
        call = CallRecord.of_prompt(purpose, self.provider.name, answer.model, view.nodes,
                                    started, utcnow(), head_id=view.head_id,
                                    input_tokens=answer.input_tokens,
                                    output_tokens=answer.output_tokens,
                                    tools_json=tools_json(options.tools),
                                    cache_creation_input_tokens=answer.cache_creation_input_tokens,
                                    cache_read_input_tokens=answer.cache_read_input_tokens)
        call_ids.append(call.id)
        metadata = {**answer.metadata, **({"stop_reason": answer.stop_reason}
                                          if answer.stop_reason else {})}
        content, blocks = (answer.text, None) if answer.blocks is None else (None, answer.blocks)
        if retry_of is not None:
            reply = await writer.retry_reply(retry_of, content, blocks, call, metadata)
        else:
            reply = await writer.reply(prompt_head.id, content, blocks, call, metadata)
        self.renders.extend(self.ledger.tenant, writer.session_id, reply)
        telemetry.export_call(self.ledger.tenant, writer.session_id, call,
                              request_model=self.provider.model,
                              finish_reason=answer.stop_reason, prompt=view.nodes,
                              reply=reply.node)
        return reply.node

    async def _failed(self, writer: TurnWriter, purpose: Purpose, view: Rendered,
                      started: datetime, error: ModelError, options: Options) -> str:
        """Records the turn's failed call, reading the prompt it was to send; its id."""
        failed = CallRecord.of_prompt(purpose, self.provider.name, self.provider.model,
                                      view.nodes, started, utcnow(), head_id=view.head_id,
                                      error_code=error.code, error_message=error.message,
                                      tools_json=tools_json(options.tools))
        recorded = await writer.failed(failed)
        telemetry.export_call(self.ledger.tenant, writer.session_id, failed,
                              request_model=self.provider.model, prompt=view.nodes)
        return recorded.id


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
