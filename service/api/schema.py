"""The GraphQL schema: queries, mutations, the live event subscription, streamed turns. schema.graphql at the
repository root is generated from here (`make schema`) and a test fails when it drifts."""
import asyncio
from datetime import datetime
from typing import AsyncGenerator, Optional

import strawberry
from strawberry.extensions import MaxTokensLimiter
from strawberry.scalars import JSON
from strawberry.types import Info
from strawberry.types.graphql import OperationType

from ..errors import BadInput, Conflict
from ..store.paging import window
from ..model.validate import MAX_BRANCH_NAME_LENGTH, MAX_INSTRUCTIONS_LENGTH, MAX_LABEL_LENGTH
from .blocks import (
    ContentBlockInput, ToolChoiceInput, ToolInput, ToolResultBlockInput, blocks_in, options_in,
    tool_definitions_in,
)
from .bookmarks import BookmarksPerOperation
from .context import LoadersPerOperation
from .errors import coded_stream, with_codes
from .events import EVENT_TYPES, SessionEvent, event_out, replay_start
from .limits import MAX_TOKENS, BoundedValidation, OperationDeadline
from .nodes import MAX_NODES_PER_LOOKUP, resolve_node
from .redaction import DESCRIPTION as REDACT, Redacted, redact
from .search import SearchHitConnection, SearchKind, search_field
from .sessions import SessionFilter, SessionOrder, sessions_field
from ..turns import tool_sets
from .tool_sets import ToolSetVersion, tool_set_out
from .turn_streams import STREAM_TYPES, TurnStreamEvent, followed
from .turn_drafts import ModelFailureInput, TurnDraft, UsageInput, draft_out, failure_in, usage_in
from .transcripts import TranscriptFormat, TranscriptImport, import_transcript
from .types import (
    MAX_CALLS_PAGE, Branch, CallDiff, CarryOver, Compaction, Message, ModelCall, Node, Role,
    Session, SessionConnection, Turn, Uncompaction, branch_out, call_diff_out, call_out,
    compaction_out, connection_out, message_out, session_out, summary_out, turn_out,
)

STRATEGY_HELP = ('"rolling" (default: the active summary alone, one at a time), "branch" '
                 '(each head renders the deepest summary compacted on its own path) or '
                 '"segmented" (a summary per disjoint segment of the head\'s chain, each '
                 'compaction adding one: the prompt before the newest stays as it was)')
RECALL_HELP = ("its turns offer the model history_search and history_expand, which the "
               "service answers itself within the turn, so the model can read back the "
               "turns a summary stands in for (docs/guides/recall.md); a sendMessage or "
               "submitToolResults `recall` overrides it for that turn")


@strawberry.type
class Query:
    @strawberry.field(description="Null, with a NOT_FOUND error at its path, when the id "
                                  "names no session: the rest of the response stands.")
    async def session(self, info: Info, id: strawberry.ID) -> Optional[Session]:
        return session_out(await info.context.loaders.sessions.load(str(id)))

    @strawberry.field(description=(
        "Sessions, newest first (by creation, or by last activity), in pages; `filter` keeps "
        "those of a tool, a project, a title holding some text, or last active in a time "
        "range. A cursor belongs to the order it was read in."))
    async def sessions(self, info: Info, first: Optional[int] = None,
                       after: Optional[str] = None, last: Optional[int] = None,
                       before: Optional[str] = None, filter: Optional[SessionFilter] = None,
                       order_by: SessionOrder = SessionOrder.CREATED) -> SessionConnection:
        return await sessions_field(info, filter, order_by, first, after, last, before)

    @strawberry.field(description=(
        "The session, message or model call with this id. Null, with a NOT_FOUND error at "
        "its path, when the id names nothing."))
    async def node(self, info: Info, id: strawberry.ID) -> Optional[Node]:
        return await resolve_node(info, str(id))

    @strawberry.field(description=(
        f"Objects by id, each once, in the order first asked (at most "
        f"{MAX_NODES_PER_LOOKUP}); null for an id that names nothing."))
    async def nodes(self, info: Info, ids: list[strawberry.ID]) -> list[Optional[Node]]:
        if len(ids) > MAX_NODES_PER_LOOKUP:
            raise BadInput(f"ids holds {len(ids)} ids; at most {MAX_NODES_PER_LOOKUP} "
                           "are looked up at once")
        distinct = dict.fromkeys(str(i) for i in ids)  # a repeated id is answered once
        return list(await asyncio.gather(*(resolve_node(info, i, missing=None)
                                           for i in distinct)))

    @strawberry.field(description="Null, with a NOT_FOUND error, when the id names no call.")
    async def call(self, info: Info, id: strawberry.ID) -> Optional[ModelCall]:
        return call_out(await info.context.loaders.calls.load(str(id)))

    @strawberry.field(description="How call `second`'s prompt differs from call `first`'s: "
                                  "nodes added, removed, and moved. Null, with a NOT_FOUND "
                                  "error, when an id names no call.")
    async def call_diff(self, info: Info, first: strawberry.ID,
                        second: strawberry.ID) -> Optional[CallDiff]:
        a, b = await info.context.loaders.calls.load_many([str(first), str(second)])
        return call_diff_out(a, b)

    @strawberry.field(description=(
        "Full-text search of every session (docs/guides/search.md): words all match, "
        "\"quoted phrases\", -excluded, prefix*; English and Chinese alike. Each hit says "
        "where it stands in the model's context at its session's HEAD (or `headId`, with "
        "`sessionId`). `kinds` limits where it matches; `roles` the nodes it returns; "
        "`since`/`until` their creation. Best first, at most 100 a page."))
    async def search(self, info: Info, query: str, session_id: Optional[strawberry.ID] = None,
                     head_id: Optional[strawberry.ID] = None,
                     roles: Optional[list[Role]] = None,
                     kinds: Optional[list[SearchKind]] = None,
                     since: Optional[datetime] = None, until: Optional[datetime] = None,
                     first: Optional[int] = None,
                     after: Optional[str] = None) -> SearchHitConnection:
        return await search_field(info, query, _optional(session_id), _optional(head_id),
                                  roles, kinds, since, until, first, after)

    @strawberry.field(description="The calls whose prompts contained a node, newest first.",
                      deprecation_reason="Use readBy on the node (`node(id)`): it pages.")
    async def calls_reading(self, info: Info, node_id: strawberry.ID,
                            first: int = 100) -> list[ModelCall]:
        await info.context.loaders.nodes.load(str(node_id))
        page = await info.context.loaders.readers.load(
            (str(node_id), window(first, maximum=MAX_CALLS_PAGE)))
        return [call_out(r.call) for r in page.items]


def _optional(id: Optional[strawberry.ID]) -> Optional[str]:
    """An optional id as given: "" stays "" (and is refused by the store), not "not given"."""
    return None if id is None else str(id)


async def _session_after(info: Info, session_id: str) -> Session:
    """The session as it is after a move (read afresh, not from the request's cache)."""
    return session_out(await info.context.services.ledger.sessions.get(session_id))


async def _branch_of(info: Info, tip_id: str, name: str | None = None) -> Branch:
    """The branch `tip_id` ends, as it is now (read afresh), or the one holding `name` now
    (a turn appended meanwhile took the name down the branch)."""
    ledger = info.context.services.ledger
    tip = await ledger.nodes.get(tip_id)
    branches = await ledger.branches.list(tip.session_id)
    found = next((b for b in branches if b.tip.id == tip_id), None) or \
        next((b for b in branches if name is not None and b.name == name), None)
    if found is None:
        raise Conflict(f"node {tip_id} was a branch tip when it was written and is one no "
                       "longer (a turn was appended after it): read Session.branches")
    return branch_out(found)


@strawberry.type
class Mutation:
    @strawberry.mutation(description=f"A new session. `summaryStrategy`: {STRATEGY_HELP}. "
                                     f"`recall`: {RECALL_HELP}. `project`: the working "
                                     "directory it belongs to (the sessions list groups and "
                                     "filters by it).")
    async def create_session(self, info: Info, title: Optional[str] = None,
                             system_prompt: Optional[str] = None,
                             extra_meta: Optional[JSON] = None,
                             summary_strategy: Optional[str] = None,
                             recall: bool = False,
                             project: Optional[str] = None) -> Session:
        ledger = info.context.services.ledger
        return session_out(await ledger.sessions.create(title, system_prompt or "", extra_meta,
                                                        summary_strategy, recall, project))

    @strawberry.mutation(description="Sets the title, merges extra_meta (a key set to null is "
                                     "removed), sets the summary strategy "
                                     f"({STRATEGY_HELP}) and/or `recall` ({RECALL_HELP}). "
                                     "Never moves HEAD.")
    async def update_session(self, info: Info, session_id: strawberry.ID,
                             title: Optional[str] = strawberry.UNSET,
                             extra_meta: Optional[JSON] = None,
                             summary_strategy: Optional[str] = None,
                             recall: Optional[bool] = None) -> Session:
        set_title = title is not strawberry.UNSET
        return session_out(await info.context.services.ledger.sessions.update(
            str(session_id), title=title if set_title else None, set_title=set_title,
            extra_meta=extra_meta, summary_strategy=summary_strategy, recall=recall))

    @strawberry.mutation(description=(
        "A new version of the session's tool set (docs/guides/tool-sets.md): every call after it — "
        "turns, retries, edits, compaction's summarizer and token count, `request` — is "
        "offered these `tools` and `toolChoice` unless it names its own tools. With "
        "`headId` it is that branch's: it applies at `headId` and every node after it on its "
        "chain. `tools: []` offers none. Definitions are checked (input schemas against the "
        "JSON Schema meta-schema): BAD_INPUT and nothing written."))
    async def set_tools(self, info: Info, session_id: strawberry.ID, tools: list[ToolInput],
                        tool_choice: Optional[ToolChoiceInput] = None,
                        head_id: Optional[strawberry.ID] = None) -> ToolSetVersion:
        version = await tool_sets.set_tools(
            info.context.services.ledger, str(session_id), tool_definitions_in(tools),
            None if tool_choice is None else {"mode": tool_choice.mode.value,
                                              "name": tool_choice.name},
            _optional(head_id))
        return tool_set_out(version)

    @strawberry.mutation(description=(
        "The user's turn: the message (`content` or `blocks`) at HEAD, then the reply. "
        "`tools` are offered to the model (and `toolChoice` says whether it must call one); "
        "a reply that calls tools is stored with its blocks and the Turn's `openToolUseIds` "
        "name them: answer with `submitToolResults`. While HEAD has open tool uses a message "
        "is BAD_INPUT naming them, unless `cancelOpenToolUses`, which first stores their "
        "answers as cancelled errors."))
    async def send_message(self, info: Info, session_id: strawberry.ID,
                           content: Optional[str] = None,
                           blocks: Optional[list[ContentBlockInput]] = None,
                           tools: Optional[list[ToolInput]] = None,
                           tool_choice: Optional[ToolChoiceInput] = None,
                           cancel_open_tool_uses: bool = False,
                           recall: Optional[bool] = None) -> Turn:
        return turn_out(await info.context.services.turns.send_message(
            str(session_id), content, blocks=blocks_in(blocks),
            options=options_in(None, None, tools, tool_choice, recall),
            cancel_open_tool_uses=cancel_open_tool_uses))

    @strawberry.mutation(description=(
        "The agent loop's next step: the results of HEAD's open tool uses (every one of "
        "them, by toolUseId), then the model's next reply, offered `tools` again; repeat "
        "while the Turn names open tool uses."))
    async def submit_tool_results(self, info: Info, session_id: strawberry.ID,
                                  results: list[ToolResultBlockInput],
                                  tools: Optional[list[ToolInput]] = None,
                                  tool_choice: Optional[ToolChoiceInput] = None,
                                  recall: Optional[bool] = None) -> Turn:
        return turn_out(await info.context.services.turns.submit_tool_results(
            str(session_id), blocks_in([ContentBlockInput(tool_result=r) for r in results]),
            options=options_in(None, None, tools, tool_choice, recall)))

    @strawberry.mutation(description=(
        "Bring your own model, first step (docs/guides/agent-runtimes.md): the user's message "
        "(`content` or `blocks`) or `toolResults` answering HEAD's open tool uses, appended "
        "at HEAD as sendMessage and submitToolResults append them; without either, the turn "
        "answers HEAD as it stands. Then the render, compacted first when it reaches the "
        "budget, as a draft: its `request(format)` is the body to send your model. Complete "
        "it with completeTurn within `ttlSeconds` (default CTXDAG_DRAFT_TTL_SECONDS). "
        "`tools`/`toolChoice` override the session's tool set for this turn."))
    async def begin_turn(self, info: Info, session_id: strawberry.ID,
                         content: Optional[str] = None,
                         blocks: Optional[list[ContentBlockInput]] = None,
                         tool_results: Optional[list[ToolResultBlockInput]] = None,
                         tools: Optional[list[ToolInput]] = None,
                         tool_choice: Optional[ToolChoiceInput] = None,
                         cancel_open_tool_uses: bool = False,
                         recall: Optional[bool] = None,
                         ttl_seconds: Optional[int] = None) -> TurnDraft:
        results = None if tool_results is None else blocks_in(
            [ContentBlockInput(tool_result=r) for r in tool_results])
        return draft_out(await info.context.services.turns.begin_turn(
            str(session_id), content, blocks=blocks_in(blocks), results=results,
            options=options_in(None, None, tools, tool_choice, recall),
            cancel_open_tool_uses=cancel_open_tool_uses, ttl_seconds=ttl_seconds))

    @strawberry.mutation(description=(
        "Bring your own model, second step: your model's reply to draft `draftId` "
        "(`content` or `blocks`) is stored after the draft's tip with the call, whose READ "
        "edges are exactly the draft's readIds; HEAD moves onto it only when HEAD is still "
        "the tip (else the reply ends a branch of its own, `headMoved: false`). With "
        "`error` the failed call alone is recorded and the draft stays open for another "
        "attempt. `clientKey` names the attempt: completing again with it returns what the "
        "first completion stored (`replayed`). CONFLICT when the draft was completed under "
        "another key; NOT_FOUND when it is unknown or expired."))
    async def complete_turn(self, info: Info, draft_id: strawberry.ID, client_key: str,
                            model: str, content: Optional[str] = None,
                            blocks: Optional[list[ContentBlockInput]] = None,
                            usage: Optional[UsageInput] = None,
                            stop_reason: Optional[str] = None,
                            provider: Optional[str] = None,
                            error: Optional[ModelFailureInput] = None) -> Turn:
        return turn_out(await info.context.services.turns.complete_turn(
            str(draft_id), client_key, model=model, content=content, blocks=blocks_in(blocks),
            usage=usage_in(usage), stop_reason=stop_reason, provider=provider,
            error=failure_in(error)))

    @strawberry.mutation(description="Appends a node without calling a model. HEAD advances "
                                     "only when the predecessor (default: HEAD) is HEAD. The "
                                     "message is `content` (text) or `blocks`, not both; a "
                                     "write that would break a tool pair is BAD_INPUT naming "
                                     "the open ids, and writes nothing.")
    async def append_message(self, info: Info, session_id: strawberry.ID, role: Role,
                             content: Optional[str] = None,
                             blocks: Optional[list[ContentBlockInput]] = None,
                             predecessor_id: Optional[strawberry.ID] = None,
                             caller_id: Optional[strawberry.ID] = None,
                             metadata: Optional[JSON] = None) -> Message:
        appended = await info.context.services.ledger.head.append_message(
            str(session_id), role.value, content, blocks=blocks_in(blocks),
            predecessor_id=_optional(predecessor_id), caller_id=_optional(caller_id),
            metadata=metadata)
        return message_out(appended.node)

    @strawberry.mutation(description="A new answer to the prompt of an assistant reply; "
                                     "HEAD moves to it.")
    async def retry(self, info: Info, node_id: strawberry.ID,
                    tools: Optional[list[ToolInput]] = None,
                    tool_choice: Optional[ToolChoiceInput] = None) -> Turn:
        return turn_out(await info.context.services.turns.retry(
            str(node_id), options=options_in(None, None, tools, tool_choice)))

    @strawberry.mutation(description="A new version of a user message, answered; HEAD moves "
                                     "to it.")
    async def edit_message(self, info: Info, node_id: strawberry.ID,
                           content: Optional[str] = None,
                           blocks: Optional[list[ContentBlockInput]] = None,
                           tools: Optional[list[ToolInput]] = None,
                           tool_choice: Optional[ToolChoiceInput] = None) -> Turn:
        return turn_out(await info.context.services.turns.edit(
            str(node_id), content, blocks=blocks_in(blocks),
            options=options_in(None, None, tools, tool_choice)))

    @strawberry.mutation(description=(
        "HEAD to any live turn of the session. `summarizeLeft`: a summary of the branch HEAD "
        "leaves (its chain below the common ancestor with `nodeId`) is written after "
        "`nodeId` as a carry node and HEAD moves onto it, in one write (`carryOver` from "
        "HEAD); `summaryInstructions` (only with it) steer that summary. BAD_INPUT, "
        "nothing written and HEAD unmoved, when there is nothing to summarize (HEAD is "
        "`nodeId` or an ancestor of it) or `nodeId` has open tool uses."))
    async def checkout(self, info: Info, session_id: strawberry.ID, node_id: strawberry.ID,
                       summarize_left: bool = False,
                       summary_instructions: Optional[str] = None) -> Session:
        services = info.context.services
        if summarize_left:
            await services.carrier.checkout(str(session_id), str(node_id),
                                            instructions=summary_instructions)
        elif summary_instructions is not None:
            raise BadInput("summaryInstructions steer the summary of the branch left: give "
                           "them with summarizeLeft: true")
        else:
            await services.ledger.head.set_head(str(session_id), str(node_id))
        return await _session_after(info, str(session_id))

    @strawberry.mutation(description=(
        "Carries a branch's conclusions into another: a summary of `fromTip`'s chain below "
        "its common ancestor with `intoHead` (exclusive) is appended after `intoHead` as a "
        "carry node (role CARRY), whose `carriedIds` name the turns it summarizes. "
        "`intoHead` renders it in place; `fromTip`'s branch renders as before. HEAD moves "
        "onto it only when `intoHead` is HEAD. `instructions` steer the summary. BAD_INPUT "
        "and nothing written when there is nothing to summarize (`fromTip` is `intoHead` or "
        "an ancestor of it), an id names no live turn of the session, or `intoHead` has "
        "open tool uses."))
    async def carry_over(self, info: Info, session_id: strawberry.ID, from_tip: strawberry.ID,
                         into_head: strawberry.ID,
                         instructions: Optional[str] = None) -> CarryOver:
        result = await info.context.services.carrier.carry_over(
            str(session_id), str(from_tip), str(into_head), instructions=instructions)
        carried = result.carried
        return CarryOver(node=message_out(carried.node), carried_ids=list(carried.carried_ids),
                         head_moved=carried.head_moved,
                         summarizer_input_tokens=result.summary.input_tokens,
                         summarizer_output_tokens=result.summary.output_tokens,
                         session=await _session_after(info, str(session_id)))

    @strawberry.mutation(description="HEAD back to an ancestor of HEAD.")
    async def rewind(self, info: Info, session_id: strawberry.ID,
                     node_id: strawberry.ID) -> Session:
        await info.context.services.ledger.head.rewind(str(session_id), str(node_id))
        return await _session_after(info, str(session_id))

    @strawberry.mutation(description="Removes a branch's exclusive nodes from every view "
                                     "(kept for provenance); HEAD moves to the fork point if "
                                     "it was on them.")
    async def delete_branch(self, info: Info, session_id: strawberry.ID,
                            tip_id: strawberry.ID) -> Session:
        await info.context.services.ledger.head.delete_branch(str(session_id), str(tip_id))
        return await _session_after(info, str(session_id))

    @strawberry.mutation(description="Compacts the branch HEAD is on (or `headId`'s). Never "
                                     "moves HEAD. `instructions`: optional focus instructions "
                                     "for the summarizer (not blank, at most "
                                     f"{MAX_INSTRUCTIONS_LENGTH} characters), stored on the "
                                     "summary. `upTo`: a turn of the head's rendered history; "
                                     "the summary covers the uncovered history through it and "
                                     "what follows stays verbatim (instead of "
                                     "`keepRecentTokens`; BAD_INPUT for a point off the chain, "
                                     "inside the current summary's segment, or between a tool "
                                     "use and its result). `dryRun`: status PREVIEWED, the "
                                     "result says what would be written, and nothing is (no "
                                     "node, no call, no event).")
    async def compact(self, info: Info, session_id: strawberry.ID,
                      keep_recent_tokens: Optional[int] = None,
                      head_id: Optional[strawberry.ID] = None,
                      instructions: Optional[str] = None,
                      up_to: Optional[strawberry.ID] = None,
                      dry_run: bool = False) -> Compaction:
        result = await info.context.services.compactor.compact(
            str(session_id), head_id=_optional(head_id),
            keep_recent_tokens=keep_recent_tokens, instructions=instructions,
            up_to=_optional(up_to), dry_run=dry_run)
        return compaction_out(result)

    @strawberry.mutation(description="Undoes a compaction: the summary stops applying (kept, "
                                     "a relic, for provenance) and what applied before "
                                     "applies again. Never moves HEAD.")
    async def uncompact(self, info: Info, summary_id: strawberry.ID) -> Uncompaction:
        ledger = info.context.services.ledger
        retired = await ledger.summaries.retire(str(summary_id))
        return Uncompaction(summary=summary_out(await ledger.summaries.get(retired.summary_id)),
                            restored_summary_id=retired.restored_id,
                            session=await _session_after(info, retired.session_id))

    @strawberry.mutation(description=(
        "Labels a node of the session (replacing its label): one line of non-blank text, at "
        f"most {MAX_LABEL_LENGTH} characters. The node itself never changes; announced as "
        "node_labeled. Never moves HEAD."))
    async def label(self, info: Info, node_id: strawberry.ID, text: str) -> Message:
        ledger = info.context.services.ledger
        await ledger.labels.set(str(node_id), text)
        return message_out(await ledger.nodes.get(str(node_id)))

    @strawberry.mutation(description=(
        "Removes a node's label (announced as node_unlabeled); a node without one is left as "
        "it is and nothing is written."))
    async def unlabel(self, info: Info, node_id: strawberry.ID) -> Message:
        ledger = info.context.services.ledger
        await ledger.labels.clear(str(node_id))
        return message_out(await ledger.nodes.get(str(node_id)))

    @strawberry.mutation(description=REDACT)
    async def redact(self, info: Info, node_id: strawberry.ID, reason: str) -> Redacted:
        return await redact(info, str(node_id), reason)

    @strawberry.mutation(description=(
        "Names the branch whose tip this is (replacing its name): one line of non-blank "
        f"text, at most {MAX_BRANCH_NAME_LENGTH} characters, not used by another branch of the "
        "session. The name follows the branch as it grows (the first turn appended after "
        "the tip takes it over) and goes with it when it is deleted; announced as "
        "branch_named. Never moves HEAD."))
    async def name_branch(self, info: Info, tip_id: strawberry.ID, name: str) -> Branch:
        ledger = info.context.services.ledger
        name = await ledger.branch_names.set(str(tip_id), name)
        return await _branch_of(info, str(tip_id), name)

    @strawberry.mutation(description=(
        "Removes a branch's name (announced as branch_unnamed); a branch without one is left "
        "as it is and nothing is written."))
    async def unname_branch(self, info: Info, tip_id: strawberry.ID) -> Branch:
        await info.context.services.ledger.branch_names.clear(str(tip_id))
        return await _branch_of(info, str(tip_id))

    @strawberry.mutation(description=(
        "Pins a message: inside the covered segment of the summary a head renders, it is "
        "rendered right after the summary, verbatim (with the other half of its tool pair), "
        "and compaction keeps room for it. Announced as node_pinned; a pinned message again "
        "writes nothing. BAD_INPUT for ROOT, a summary, a node deleted with its branch, or "
        "when ROOT and the pinned messages would hold more than a quarter of the context "
        "window (the message says how many tokens). Never moves HEAD."))
    async def pin(self, info: Info, node_id: strawberry.ID) -> Message:
        services = info.context.services
        await services.ledger.pins.set(str(node_id), services.compactor.policy.max_pinned_tokens)
        return message_out(await services.ledger.nodes.get(str(node_id)))

    @strawberry.mutation(description=(
        "Unpins a message (announced as node_unpinned); a message not pinned is left as it "
        "is and nothing is written."))
    async def unpin(self, info: Info, node_id: strawberry.ID) -> Message:
        ledger = info.context.services.ledger
        await ledger.pins.clear(str(node_id))
        return message_out(await ledger.nodes.get(str(node_id)))

    @strawberry.mutation(description="A sub-agent turn hanging off a node; never moves HEAD.")
    async def spawn_task(self, info: Info, session_id: strawberry.ID,
                         from_node_id: strawberry.ID, prompt: str) -> Turn:
        return turn_out(await info.context.services.turns.spawn_task(
            str(session_id), str(from_node_id), prompt))

    @strawberry.mutation(description="Records a call an external runtime made outside a turn "
                                     "(within one, use beginTurn and completeTurn); with "
                                     "`output` (text) or `outputBlocks`, the reply is "
                                     "appended after the last node read.")
    async def record_call(self, info: Info, session_id: strawberry.ID,
                          read_ids: list[strawberry.ID], model: str,
                          output: Optional[str] = None,
                          output_blocks: Optional[list[ContentBlockInput]] = None,
                          input_tokens: Optional[int] = None,
                          output_tokens: Optional[int] = None) -> ModelCall:
        usage = {k: v for k, v in (("input_tokens", input_tokens),
                                   ("output_tokens", output_tokens)) if v is not None}
        call = await info.context.services.turns.record_call(
            str(session_id), [str(i) for i in read_ids], model, output, usage or None,
            output_blocks=blocks_in(output_blocks))
        return call_out(call)

    @strawberry.mutation(description=(
        "An agent tool's session file (JSONL `content`; `format` detected from its first "
        "line when not given) as a session: new, extended by the entries it gained since it "
        "was imported, or unchanged. `fileName` names it in errors and provenance (a Claude "
        "Code session is named by it: without it, by the file's sessionId); the server keeps "
        "its reading under that name, so the same name's next, grown text parses only the "
        "lines it gained. Bounded by the "
        "request body limit. An entry it cannot map (a malformed line, an unknown entry "
        "type, a block the ledger refuses) is skipped or mentioned and listed in "
        "`degraded`; with `strict` it is BAD_INPUT naming the line (`extensions.line`) and "
        "why, and writes nothing, as a line no import can take always is."))
    async def import_transcript(self, info: Info, content: str,
                                format: Optional[TranscriptFormat] = None,
                                file_name: Optional[str] = None,
                                strict: bool = False) -> TranscriptImport:
        return await import_transcript(info, content, format, file_name, strict)


@strawberry.type
class Subscription:
    @strawberry.subscription(description=(
        "The events of one session (node_appended, head_moved, branch_deleted, compaction_*, "
        "summary_retired, summary_strategy_changed, node_labeled, node_unlabeled, branch_named, "
        "branch_unnamed, node_pinned, node_unpinned, branch_carried, node_redacted), in order, from whichever "
        "replica wrote them. With `after` (the seq of the last event received), first the "
        "ones missed since, then live; EVENTS_EXPIRED when those are no longer kept (reload "
        "the session and subscribe without `after`). Without, from now on."))
    async def session_events(self, info: Info, session_id: strawberry.ID,
                             after: Optional[int] = None
                             ) -> AsyncGenerator[SessionEvent, None]:
        start = await replay_start(info.context.services.ledger.events, str(session_id), after)
        async for event in info.context.runtime.events.stream(str(session_id), start):
            yield event_out(event)

    @strawberry.subscription(description=(
        "sendMessage, streamed (docs/guides/agent-runtimes.md, \"Streaming\"): the same turn, "
        "told as the model produces it — per model call ModelCallStarted, text and thinking "
        "deltas, each block as it closes (a tool use with its whole input) — then TurnDone "
        "with the stored Turn. The turn runs on when the subscriber leaves: it is stored as "
        "sendMessage would store it."))
    async def send_message_stream(self, info: Info, session_id: strawberry.ID,
                                  content: Optional[str] = None,
                                  blocks: Optional[list[ContentBlockInput]] = None,
                                  tools: Optional[list[ToolInput]] = None,
                                  tool_choice: Optional[ToolChoiceInput] = None,
                                  cancel_open_tool_uses: bool = False,
                                  recall: Optional[bool] = None
                                  ) -> AsyncGenerator[TurnStreamEvent, None]:
        turns = info.context.services.turns
        async for event in followed(info, lambda listener: turns.send_message(
                str(session_id), content, blocks=blocks_in(blocks),
                options=options_in(None, None, tools, tool_choice, recall),
                cancel_open_tool_uses=cancel_open_tool_uses, listener=listener)):
            yield event

    @strawberry.subscription(description=(
        "submitToolResults, streamed as sendMessageStream is."))
    async def submit_tool_results_stream(self, info: Info, session_id: strawberry.ID,
                                         results: list[ToolResultBlockInput],
                                         tools: Optional[list[ToolInput]] = None,
                                         tool_choice: Optional[ToolChoiceInput] = None,
                                         recall: Optional[bool] = None
                                         ) -> AsyncGenerator[TurnStreamEvent, None]:
        turns = info.context.services.turns
        async for event in followed(info, lambda listener: turns.submit_tool_results(
                str(session_id), blocks_in([ContentBlockInput(tool_result=r) for r in results]),
                options=options_in(None, None, tools, tool_choice, recall),
                listener=listener)):
            yield event

    @strawberry.subscription(description="retry, streamed as sendMessageStream is.")
    async def retry_stream(self, info: Info, node_id: strawberry.ID,
                           tools: Optional[list[ToolInput]] = None,
                           tool_choice: Optional[ToolChoiceInput] = None
                           ) -> AsyncGenerator[TurnStreamEvent, None]:
        turns = info.context.services.turns
        async for event in followed(info, lambda listener: turns.retry(
                str(node_id), options=options_in(None, None, tools, tool_choice),
                listener=listener)):
            yield event

    @strawberry.subscription(description="editMessage, streamed as sendMessageStream is.")
    async def edit_message_stream(self, info: Info, node_id: strawberry.ID,
                                  content: Optional[str] = None,
                                  blocks: Optional[list[ContentBlockInput]] = None,
                                  tools: Optional[list[ToolInput]] = None,
                                  tool_choice: Optional[ToolChoiceInput] = None
                                  ) -> AsyncGenerator[TurnStreamEvent, None]:
        turns = info.context.services.turns
        async for event in followed(info, lambda listener: turns.edit(
                str(node_id), content, blocks=blocks_in(blocks),
                options=options_in(None, None, tools, tool_choice), listener=listener)):
            yield event


class Schema(strawberry.Schema):
    """Every result leaves through `execute` (HTTP) or `stream` (websockets, and queries
    and mutations sent over them), and each codes its errors the same way."""

    def process_errors(self, errors, execution_context=None) -> None:
        """Expected errors are the client's business; only unexpected ones are logged
        (by `coded`, with their traceback, before they are masked)."""

    async def execute(self, *args, **kwargs):
        # A subscription answers over a websocket, or over HTTP as a multipart stream
        # (transport.py; both through `stream`); a plain request for one is refused as
        # such, not run as a query.
        allowed = kwargs.get("allowed_operation_types")
        if allowed is not None:
            kwargs["allowed_operation_types"] = set(allowed) - {OperationType.SUBSCRIPTION}
        return with_codes(await super().execute(*args, **kwargs))

    async def stream(self, *args, **kwargs):
        return coded_stream(await super().stream(*args, **kwargs))


schema = Schema(
    query=Query,
    mutation=Mutation,
    subscription=Subscription,
    types=[*EVENT_TYPES, *STREAM_TYPES],
    extensions=[
        LoadersPerOperation,
        BookmarksPerOperation,
        lambda: MaxTokensLimiter(max_token_count=MAX_TOKENS),
        BoundedValidation,
        OperationDeadline,
    ],
)
