"""The GraphQL types. Each is built from a store record by one function; resolvers that
need more data go through the request's DataLoaders (service/api/loaders.py)."""
from datetime import datetime
from typing import Any, Awaitable, Callable, Generic, Optional, TypeVar

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from .. import store
from ..model import blocks as block_rules
from ..context import compaction
from ..context.compaction import CompactionResult
from ..store.calls import diff_reads, diff_tools
from ..store.capsules import fold
from ..store.paging import Page, Window, window
from ..store.views import GraphRow
from ..turns.replay import Replay, compared_head, replayed
from ..turns.requests import open_tool_uses
from .budget import charged
from .caching import CacheBreak, CacheUsage, cache_break_of, cache_usage_out
from .blocks import (
    ContentBlock, RequestFormat, ToolChoiceInput, ToolInput, block_out, media_of, options_in,
    request_of,
)
from ..turns.service import TurnResult
from ..turns import tool_sets
from .tool_sets import ToolSetVersion, tool_set_out


MAX_CALLS_PAGE = 1000  # calls in a page of Session.modelCalls, Message.readBy, callsReading

Role = strawberry.enum(store.Role, description="Who a node speaks for.")
Purpose = strawberry.enum(store.Purpose, description="Why a model was called.")
CompactionStatus = strawberry.enum(compaction.CompactionStatus)


@strawberry.interface(description=(
    "An object with a globally unique id (Relay's object identification): `node(id)` "
    "returns it. Sessions, messages and model calls are nodes."))
class Node:
    id: strawberry.ID


@strawberry.type(description="A medium a redacted message named: its data is erased.")
class RedactedMedium:
    sha256: str
    media_type: str
    bytes: int


@strawberry.type(description=(
    "When and why a node's content was erased (`redact`). Its id, role, edges, the calls "
    "that read it and the summaries covering it stay; it cannot be undone."))
class Redaction:
    node_id: strawberry.Private[str]
    at: datetime
    reason: str
    media: list[RedactedMedium] = strawberry.field(description=(
        "The media its blocks named, with their hash and size (a medium no other node "
        "carried was deleted, data and all)."))

    @strawberry.field(description=(
        "The summaries and carry nodes that stand in for this node with their own text, "
        "not redacted themselves: they may quote what was erased (redact or re-summarize "
        "them). Newest first."))
    async def may_be_quoted_by_ids(self, info: Info) -> list[strawberry.ID]:
        return list(await info.context.loaders.quoting.load(self.node_id))


def redaction_out(node_id: str, r: store.Redaction | None) -> Optional[Redaction]:
    if r is None:
        return None
    return Redaction(node_id=node_id, at=r.at, reason=r.reason, media=[
        RedactedMedium(sha256=m.sha256, media_type=m.media_type, bytes=m.bytes)
        for m in r.media])


@strawberry.type(description=(
    "One node of a session's conversation DAG: a turn, the system prompt (ROOT), a "
    "summary or a carry node (a summary of another branch). Immutable."))
class Message(Node):
    session_id: strawberry.ID
    role: Role
    content: str
    predecessor_id: Optional[strawberry.ID]
    caller_id: Optional[strawberry.ID]
    fork_of: Optional[strawberry.ID] = strawberry.field(
        description="The node this one was retried or edited from.")
    tokens: int = strawberry.field(description="Estimated tokens of the content.")
    created_at: datetime
    seq: int = strawberry.field(description="Display order only; never decides coverage.")
    depth: int = strawberry.field(description="Edges from ROOT along PREDECESSOR.")
    side_branch: bool = strawberry.field(description="On a spawned side branch.")
    deleted: bool = strawberry.field(
        description="Deleted with its branch: gone from every view, kept for provenance.")
    out_of_context: bool = strawberry.field(default=False, description=(
        "Kept out of every render: a reply its tool left out of its model's context (an "
        "imported aborted or errored reply) or a tool message answering one."))
    metadata: JSON
    stored_blocks: strawberry.Private[tuple]
    redaction: Optional[Redaction] = strawberry.field(description=(
        "Set once the node was redacted: its content and blocks then hold the redaction "
        "marker \"[redacted]\" (tool uses keep their id and name, results the id they "
        "answer). Null for a node never redacted."))

    @strawberry.field(description=(
        "On a summary or carry node not itself redacted: the redacted nodes it stands in "
        "for, in seq order. Its text may quote them: redact or re-summarize it too. Empty "
        "on any other node."))
    async def may_quote_redacted_ids(self, info: Info) -> list[strawberry.ID]:
        return list(await info.context.loaders.quoted.load(str(self.id)))

    @strawberry.field(description=(
        "The message's content blocks, in order (a plain message is one text block); "
        "`content` is their text projection."))
    def blocks(self, info: Info) -> list[ContentBlock]:
        return [block_out(b) for b in charged(info, self.stored_blocks)]

    @strawberry.field(description=(
        "The tool uses this message opens (ids of its toolUse blocks): the next message must "
        "answer every one of them."))
    def tool_use_ids(self, info: Info) -> list[str]:
        return list(charged(info, block_rules.tool_use_ids(self.stored_blocks)))

    @strawberry.field(description="Live nodes whose predecessor is this one.")
    async def children(self, info: Info) -> list["Message"]:
        return [message_out(n) for n in await info.context.loaders.children.load(str(self.id))]

    @strawberry.field(description=(
        "The summaries whose covered segment contains this node, newest first (relics, "
        "retired and deleted ones included, each marked as such; `isActive` names the "
        "session's active summary)."))
    async def covered_by(self, info: Info) -> list["Summary"]:
        loaders = info.context.loaders
        ids = await loaders.covering.load(str(self.id))
        return [summary_out(s) for s in await loaders.summaries.load_many(ids)]

    @strawberry.field(description="The calls whose prompts contained this node, newest first.")
    async def read_by(self, info: Info, first: Optional[int] = None,
                      after: Optional[str] = None, last: Optional[int] = None,
                      before: Optional[str] = None) -> "CallReadingConnection":
        win = window(first, after, last, before, maximum=MAX_CALLS_PAGE)
        page = await info.context.loaders.readers.load((str(self.id), win))
        return CallReadingConnection(
            edges=[CallReadingEdge(cursor=c, node=call_out(r.call), position=r.position)
                   for r, c in zip(page.items, page.cursors)],
            nodes=[call_out(r.call) for r in page.items], page_info=page_info_out(page),
            total_count=page.total)

    @strawberry.field(description=(
        "The node's label (`label`/`unlabel`), null when none: data about the node, held "
        "beside it; the node itself never changes."))
    async def label(self, info: Info) -> Optional[str]:
        return await info.context.loaders.labels.load(str(self.id))

    @strawberry.field(description=(
        "Whether the node is pinned (`pin`/`unpin`): inside the covered segment of the "
        "summary a head renders, it is rendered right after the summary, verbatim."))
    async def pinned(self, info: Info) -> bool:
        return bool(await info.context.loaders.pins.load(str(self.id)))

    @strawberry.field(description=(
        "On a carry node (role CARRY, a branch summary): the ids of the turns of the branch "
        "it summarizes, in chain order (its provenance); empty on any other node."))
    async def carried_ids(self, info: Info) -> list[strawberry.ID]:
        return list(await info.context.loaders.carried.load(str(self.id)))

    @strawberry.field(description="On a carry node: the turns it summarizes, in chain order.")
    async def carried_from(self, info: Info) -> list["Message"]:
        return await _nodes(info, list(await info.context.loaders.carried.load(str(self.id))))

    @strawberry.field(description=(
        "The carry nodes (branch summaries on other branches) that summarize this node, "
        "newest first."))
    async def carried_by(self, info: Info) -> list["Message"]:
        return await _nodes(info, list(await info.context.loaders.carriers.load(str(self.id))))

    @strawberry.field(description="This summary's record, when the node is a summary.")
    async def summary(self, info: Info) -> Optional["Summary"]:
        if self.role != Role.SUMMARY:
            return None
        return summary_out(await info.context.loaders.summaries.load(str(self.id)))


def message_out(n: store.Node) -> Message:
    return Message(id=n.id, session_id=n.session_id, role=n.role, content=n.content,
                predecessor_id=n.predecessor_id, caller_id=n.caller_id, fork_of=n.fork_of,
                tokens=n.tokens, created_at=n.created_at, seq=n.seq, depth=n.depth,
                side_branch=n.side_branch, deleted=n.deleted, metadata=dict(n.metadata),
                out_of_context=n.out_of_context, stored_blocks=n.blocks,
                redaction=redaction_out(n.id, n.redaction))


@strawberry.type
class Branch:
    tip: Message
    is_head: bool = strawberry.field(description="HEAD is this branch's tip.")
    holds_head: bool = strawberry.field(description="HEAD lies on this branch's chain.")
    length: int = strawberry.field(description="Nodes from ROOT to the tip, both included.")
    summary_id: Optional[strawberry.ID] = strawberry.field(
        description="The summary the tip's render uses; null when it renders verbatim.")
    name: Optional[str] = strawberry.field(description=(
        "The branch's name (`nameBranch`/`unnameBranch`), null when unnamed; it follows the "
        "branch as it grows."))

    @strawberry.field(description="The summary the tip's render uses.")
    async def summary(self, info: Info) -> Optional["Summary"]:
        if self.summary_id is None:
            return None
        return summary_out(await info.context.loaders.summaries.load(str(self.summary_id)))

    @strawberry.field(description=(
        "Prompt-cache accounting of the calls whose head lies on this branch's chain."))
    async def cache_usage(self, info: Info) -> CacheUsage:
        tip = self.tip
        return cache_usage_out(await info.context.loaders.cache_totals.load(
            (str(tip.session_id), str(tip.id))))


def branch_out(b: store.Branch) -> Branch:
    return Branch(tip=message_out(b.tip), is_head=b.is_head, holds_head=b.holds_head,
                  length=b.length, summary_id=b.summary_id, name=b.name)


@strawberry.type(description="What the model reads from a head, in prompt order.")
class RenderedContext:
    head_id: strawberry.ID
    node_ids: list[strawberry.ID]
    nodes: list[Message]
    summary_id: Optional[strawberry.ID] = strawberry.field(
        description="The summary standing in for its covered segment, if the rule applied.")
    tokens: int
    stand_in_ids: list[strawberry.ID] = strawberry.field(description=(
        "Every summary standing in, in prompt order: under segmented one per segment, "
        "otherwise summaryId alone (or none); summaryId is the last."))
    open_tool_use_ids: list[str] = strawberry.field(description=(
        "Tool uses the head leaves unanswered: a runtime appends their results before it "
        "asks the model (`request` refuses until then)."))
    rendered: strawberry.Private[store.Rendered]

    @strawberry.field(description=(
        "Exactly the body a runtime sends to the provider for this render (Anthropic's "
        "`POST /v1/messages`, OpenAI's `POST /v1/chat/completions`): the system prompt, the "
        "messages with their blocks in the format's shape, the summary stand-in framed as "
        "the service frames it, and the given model, maxTokens, tools and toolChoice. The "
        "service's own providers send the same body. BAD_INPUT while tool uses are open."))
    async def request(self, info: Info, format: RequestFormat, model: Optional[str] = None,
                      max_tokens: Optional[int] = None, tools: Optional[list[ToolInput]] = None,
                      tool_choice: Optional[ToolChoiceInput] = None) -> JSON:
        options = await tool_sets.offered(
            info.context.services.ledger, self.rendered.nodes[0].session_id,
            self.rendered.head_id, options_in(model, max_tokens, tools, tool_choice))
        return await request_of(info, self.rendered, format, options)


def rendered_out(r: store.Rendered) -> RenderedContext:
    return RenderedContext(head_id=r.head_id, node_ids=list(r.node_ids),
                           nodes=[message_out(n) for n in r.nodes], summary_id=r.summary_id,
                           tokens=sum(n.tokens for n in r.nodes),
                           stand_in_ids=list(r.stand_in_ids),
                           open_tool_use_ids=open_tool_uses(r.nodes), rendered=r)


@strawberry.type(description="A summary: the stand-in for a contiguous chain segment.")
class Summary:
    id: strawberry.ID
    session_id: strawberry.ID
    content: str
    covers_ids: list[strawberry.ID] = strawberry.field(
        description="The covered turns in chain order (never a summary).")
    strategy: str = strawberry.field(
        description="The session's summary strategy when it was written.")
    created_at: datetime
    metadata: JSON
    instructions: Optional[str] = strawberry.field(
        description="The focus instructions it was compacted with; null when none.")
    seq: int = strawberry.field(description="Write order in its session.")
    retired: bool = strawberry.field(
        description="Undone by uncompact: applies nowhere, kept for provenance.")
    deleted: bool = strawberry.field(description="Deleted with a branch holding covered turns.")
    absorbed_id: Optional[strawberry.ID] = strawberry.field(
        description="The summary it relayed and extended.")
    compacted_head_id: Optional[strawberry.ID] = strawberry.field(
        description="The head whose render was compacted.")
    retained_ids: Optional[list[strawberry.ID]] = strawberry.field(
        description="That head's chain below the covered segment, in chain order.")
    nested_ids: list[strawberry.ID] = strawberry.field(description=(
        "A nested summary (segmented strategy): the summaries it merged, in chain order; "
        "their segments make up its own. Empty for every other summary."))
    stored_superseded: strawberry.Private[bool]
    redaction: Optional[Redaction] = strawberry.field(
        description="Set once the summary itself was redacted.")

    @strawberry.field(description=(
        "The redacted nodes its segment holds, in seq order, while it is not redacted "
        "itself: its text may quote them (redact it, or uncompact and compact again)."))
    async def may_quote_redacted_ids(self, info: Info) -> list[strawberry.ID]:
        return list(await info.context.loaders.quoted.load(str(self.id)))

    @strawberry.field(description=(
        "A relic: no live branch renders it (rolling strategy: it is not the active "
        "summary). Relics never stand in for anything."))
    async def superseded(self, info: Info) -> bool:
        session = await info.context.loaders.sessions.load(str(self.session_id))
        if session.summary_strategy == store.SummaryStrategy.ROLLING.value:
            return self.stored_superseded
        branches = await info.context.loaders.branches.load(str(self.session_id))
        return all(str(self.id) not in b.stand_in_ids for b in branches)

    @strawberry.field(description="The session's active summary (the latest compaction that "
                                  "still applies).")
    async def is_active(self, info: Info) -> bool:
        session = await info.context.loaders.sessions.load(str(self.session_id))
        return session.active_summary_id == str(self.id)


def summary_out(s: store.Summary) -> Summary:
    return Summary(id=s.id, session_id=s.node.session_id, content=s.content,
                   covers_ids=list(s.covers_ids), stored_superseded=s.superseded,
                   strategy=s.strategy, created_at=s.node.created_at,
                   metadata=dict(s.node.metadata), instructions=s.instructions,
                   seq=s.node.seq, retired=s.retired, deleted=s.node.deleted,
                   absorbed_id=s.absorbed_id, compacted_head_id=s.compacted_head_id,
                   retained_ids=None if s.retained_ids is None else list(s.retained_ids),
                   nested_ids=list(s.nested_ids),
                   redaction=redaction_out(s.id, s.node.redaction))


PREVIEW_CHARACTERS = 120


@strawberry.type(description="A row of the session graph (the capsule contract).")
class GraphNode:
    id: strawberry.ID
    role: Role
    seq: int
    predecessor_id: Optional[strawberry.ID]
    caller_id: Optional[strawberry.ID]
    fork_of: Optional[strawberry.ID] = strawberry.field(
        description="The node this one was retried or edited from.")
    is_head: bool
    tokens: int = strawberry.field(description="Estimated tokens of the content.")
    preview: str = strawberry.field(description=(
        f"The content's start, whitespace collapsed, at most {PREVIEW_CHARACTERS} characters "
        "(… when cut); the whole content is on Message."))
    side_branch: bool = strawberry.field(description="On a spawned side branch.")
    deleted: bool = strawberry.field(description=(
        "Deleted with its branch (rows only with `includeDeleted`)."))
    out_of_context: bool = strawberry.field(default=False, description=(
        "Kept out of every render: a reply its tool left out of its model's context (an "
        "imported aborted or errored reply) or a tool message answering one."))
    covers_ids: Optional[list[strawberry.ID]] = strawberry.field(description=(
        "On capsules only (rolling: the active summary; branch: every summary a live "
        "branch renders): its coverage plus the caller subtrees of covered turns, minus "
        "ids that no longer exist. Fold these into the summary's capsule."))
    superseded_summary: bool = strawberry.field(description=(
        "A relic summary: shown as such, folds nothing."))
    retired: bool = strawberry.field(description="A summary undone by uncompact.")
    folded_into: Optional[strawberry.ID] = strawberry.field(description=(
        "The capsule this row folds into (the one whose coversIds hold it; of several, the "
        "one with the fewest ids, the newest among equals); null when the row is drawn."))
    drawn_from_id: Optional[strawberry.ID] = strawberry.field(description=(
        "Where to draw the edge into this row from: its predecessor when that is drawn, "
        "otherwise the capsule the predecessor folds into; null for ROOT."))
    stored_blocks: strawberry.Private[tuple] = ()

    @strawberry.field(description=(
        "The node's content blocks, for drawing tool calls, results, thinking and images "
        "(a plain message is one text block holding its preview; media data is loaded only "
        "when asked)."))
    def blocks(self, info: Info) -> list[ContentBlock]:
        return [block_out(b) for b in charged(info, self.stored_blocks)]

    @strawberry.field(description="The tool uses this row opens; the next row answers them.")
    def tool_use_ids(self, info: Info) -> list[str]:
        return list(charged(info, block_rules.tool_use_ids(self.stored_blocks)))

    @strawberry.field(description=(
        "The node's label (`label`/`unlabel`), null when none: data about the node, held "
        "beside it; the node itself never changes."))
    async def label(self, info: Info) -> Optional[str]:
        return await info.context.loaders.labels.load(str(self.id))

    @strawberry.field(description=(
        "The name of the branch this node is the tip of (`nameBranch`), null when it is "
        "not a named branch's tip."))
    async def branch_name(self, info: Info) -> Optional[str]:
        return await info.context.loaders.branch_names.load(str(self.id))

    @strawberry.field(description=(
        "Whether the node is pinned (`pin`/`unpin`). A pinned row a capsule's `coversIds` "
        "holds still folds into the capsule, and is rendered all the same: right after the "
        "summary, on every branch the capsule applies to."))
    async def pinned(self, info: Info) -> bool:
        return bool(await info.context.loaders.pins.load(str(self.id)))


@strawberry.type
class SessionGraph:
    nodes: list[GraphNode]


def preview_of(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARACTERS else flat[:PREVIEW_CHARACTERS - 1] + "…"


def graph_out(rows: list[GraphRow]) -> SessionGraph:
    placed = fold(rows)
    return SessionGraph(nodes=[
        GraphNode(id=r.id, role=Role(r.role), seq=r.seq, predecessor_id=r.predecessor_id,
                  caller_id=r.caller_id, fork_of=r.fork_of, is_head=r.is_head,
                  tokens=r.tokens, preview=preview_of(r.preview), side_branch=r.side_branch,
                  deleted=r.deleted, out_of_context=r.out_of_context,
                  covers_ids=list(r.covers_ids) if r.covers_ids is not None else None,
                  superseded_summary=r.superseded_summary, retired=r.retired,
                  folded_into=placed[r.id].folded_into, drawn_from_id=placed[r.id].drawn_from,
                  stored_blocks=r.blocks)
        for r in rows])


@strawberry.type(description="A recorded model call and what its prompt contained.")
class ModelCall(Node):
    session_id: strawberry.ID
    purpose: Purpose
    provider: str
    model: Optional[str]
    head_id: Optional[strawberry.ID] = strawberry.field(
        description="The head whose render was the prompt, when it was one.")
    output_id: Optional[strawberry.ID]
    input_tokens: Optional[int]
    output_tokens: Optional[int]
    error: Optional[str]
    error_code: Optional[str]
    created_at: datetime
    finished_at: datetime
    read_count: int
    recalled_reads: int = strawberry.field(default=0, description=(
        "How many of its reads are recalled turns: nodes its prompt quotes inside a recall "
        "tool's result rather than holds as messages (docs/guides/recall.md)."))
    # Prompt caching (docs/concepts/provenance.md); null on calls stored before it was kept.
    cache_creation_input_tokens: Optional[int] = strawberry.field(description=(
        "Tokens the provider wrote to its cache, as reported (Anthropic)."))
    cache_read_input_tokens: Optional[int] = strawberry.field(description=(
        "Tokens the provider read from its cache, as reported (Anthropic; OpenAI's "
        "cached_tokens)."))
    prompt_tokens: Optional[int] = strawberry.field(description=(
        "The prompt's tokens as the ledger counts them (reads' stored tokens and tools')."))
    previous_call_id: Optional[strawberry.ID] = strawberry.field(description=(
        "The session's call started last before it, whose prompt it is compared with."))
    shared_prefix_reads: Optional[int] = strawberry.field(description=(
        "How many reads, from the first, are the previous call's at the same positions "
        "(0 when the two were offered other tools)."))
    shared_prefix_tokens: Optional[int] = strawberry.field(description=(
        "Their tokens, and the tools' (offered the same): what a provider could serve "
        "from its cache."))

    @strawberry.field(description=(
        "Where the prompt stopped sharing the previous call's, and which write broke it; "
        "null when it holds the whole previous prompt (or has no previous call)."))
    async def cache_break(self, info: Info) -> Optional[CacheBreak]:
        return await cache_break_of(info, str(self.id))

    @strawberry.field(description=(
        "Ids of every node the call read: the prompt's, in prompt order, then the turns its "
        "recall results quote (the last `recalledReads`; docs/guides/recall.md)."))
    async def read_ids(self, info: Info) -> list[strawberry.ID]:
        call = await info.context.loaders.calls.load(str(self.id))
        return list(call.read_ids or ())

    @strawberry.field(description="The nodes the prompt contained, in prompt order.")
    async def reads(self, info: Info) -> list[Message]:
        call = await info.context.loaders.calls.load(str(self.id))
        return await _nodes(info, list(call.read_ids or ()))

    tools_sha256: Optional[str] = strawberry.field(default=None, description=(
        "The content hash of the tools it was offered (a ToolSet's sha256); null: none."))

    @strawberry.field(description=(
        "The tools the model was offered (part of what it read), as the neutral definitions "
        "{name, description, input_schema}; null when none were."))
    async def tools(self, info: Info) -> Optional[JSON]:
        if self.tools_sha256 is None:
            return None
        return await info.context.loaders.tool_sets.load(self.tools_sha256)

    @strawberry.field
    async def output(self, info: Info) -> Optional[Message]:
        if self.output_id is None:
            return None
        return message_out(await info.context.loaders.nodes.load(str(self.output_id)))

    @strawberry.field(description=(
        "The prompt rebuilt from the call's reads, and how today's render of the same head "
        "differs from it."))
    async def replay(self, info: Info) -> "CallReplay":
        loaders = info.context.loaders
        call = await loaders.calls.load(str(self.id))
        nodes = await loaders.nodes.load_many(list(call.read_ids or ()))
        head_id, today = compared_head(call), None
        if head_id is not None and not (await loaders.nodes.load(head_id)).deleted:
            today = (await loaders.renders.load((call.session_id, head_id))).node_ids
        tools = (None if call.tools_sha256 is None
                 else await loaders.tool_sets.load(call.tools_sha256))
        return replay_out(replayed(call, nodes, today, await media_of(info, nodes), tools),
                          tools)


@strawberry.type(description="Tool names: offered to the second call only (added), to the "
                             "first only (removed), to both with another definition (changed).")
class ToolsDiff:
    added: list[str]
    removed: list[str]
    changed: list[str]


@strawberry.type(description="How two calls' prompts differ, node by node (the second "
                                    "against the first).")
class CallDiff:
    first: ModelCall
    second: ModelCall
    added_ids: list[strawberry.ID] = strawberry.field(
        description="In the second prompt only, in its order.")
    removed_ids: list[strawberry.ID] = strawberry.field(
        description="In the first prompt only, in its order.")
    moved_ids: list[strawberry.ID] = strawberry.field(
        description="In both, but placed differently among the nodes both hold "
                    "(the second prompt's order).")
    tools_changed: bool = strawberry.field(
        description="The two calls were offered different tools (see ModelCall.tools).")

    @strawberry.field(description=(
        "How the tools they were offered differ, by name (ModelCall.tools)."))
    async def tools_diff(self, info: Info) -> ToolsDiff:
        offered = [[] if c.tools_sha256 is None
                   else await info.context.loaders.tool_sets.load(c.tools_sha256) or []
                   for c in (self.first, self.second)]
        diff = diff_tools(*offered)
        return ToolsDiff(added=list(diff.added), removed=list(diff.removed),
                         changed=list(diff.changed))

    @strawberry.field
    async def added(self, info: Info) -> list[Message]:
        return await _nodes(info, self.added_ids)

    @strawberry.field
    async def removed(self, info: Info) -> list[Message]:
        return await _nodes(info, self.removed_ids)

    @strawberry.field
    async def moved(self, info: Info) -> list[Message]:
        return await _nodes(info, self.moved_ids)


async def _nodes(info: Info, ids: list[str] | list[strawberry.ID]) -> list[Message]:
    return [message_out(n) for n in await info.context.loaders.nodes.load_many(
        [str(i) for i in ids])]


def call_diff_out(first: store.Call, second: store.Call) -> CallDiff:
    diff = diff_reads(first.read_ids or (), second.read_ids or ())
    return CallDiff(first=call_out(first), second=call_out(second),
                    added_ids=list(diff.added), removed_ids=list(diff.dropped),
                    moved_ids=list(diff.moved),
                    tools_changed=first.tools_sha256 != second.tools_sha256)


@strawberry.type(description="A call's prompt rebuilt from the nodes it read (nodes are "
                                    "immutable, so it is the prompt that was sent), compared "
                                    "with today's render of the head it was rendered from.")
class CallReplay:
    system: str = strawberry.field(description="The system text the prompt carried.")
    messages: JSON = strawberry.field(description=(
        "The prompt's messages in the Messages API shape ({role, content})."))
    current_ids: Optional[list[strawberry.ID]] = strawberry.field(description=(
        "Today's render of the call's head; null when the prompt was not a render "
        "(summaries, external calls) or the head was deleted since."))
    differs: Optional[bool] = strawberry.field(description=(
        "Today's render differs from the prompt; null when there is nothing to compare."))
    added_ids: list[strawberry.ID] = strawberry.field(
        description="In today's render only, in its order.")
    removed_ids: list[strawberry.ID] = strawberry.field(
        description="In the call's prompt only, in its order.")
    tools: Optional[JSON] = strawberry.field(default=None, description=(
        "The tools the prompt was offered (ModelCall.tools); null when none were."))

    @strawberry.field
    async def added(self, info: Info) -> list[Message]:
        return await _nodes(info, self.added_ids)

    @strawberry.field
    async def removed(self, info: Info) -> list[Message]:
        return await _nodes(info, self.removed_ids)


def replay_out(r: Replay, tools: list[dict] | None = None) -> CallReplay:
    return CallReplay(system=r.system, messages=list(r.messages), tools=tools,
                      current_ids=None if r.current_ids is None else list(r.current_ids),
                      differs=r.differs, added_ids=list(r.added), removed_ids=list(r.dropped))


def call_out(c: store.Call) -> ModelCall:
    return ModelCall(id=c.id, session_id=c.session_id, purpose=c.purpose,
                     provider=c.provider, model=c.model, head_id=c.head_id,
                     output_id=c.output_id, input_tokens=c.input_tokens,
                     output_tokens=c.output_tokens, error=c.error, error_code=c.error_code,
                     created_at=c.started_at, finished_at=c.finished_at,
                     read_count=c.read_count, recalled_reads=c.recalled_reads,
                     tools_sha256=c.tools_sha256,
                     cache_creation_input_tokens=c.cache_creation_input_tokens,
                     cache_read_input_tokens=c.cache_read_input_tokens,
                     prompt_tokens=c.prompt_tokens, previous_call_id=c.previous_call_id,
                     shared_prefix_reads=c.shared_prefix_reads,
                     shared_prefix_tokens=c.shared_prefix_tokens)


@strawberry.type
class SessionSource:
    tool: str = strawberry.field(description="The tool that wrote it: claude-code, pi or codex.")
    version: Optional[str] = strawberry.field(description=(
        "The tool's version, when the file records it (Pi's files do not)."))
    file: str = strawberry.field(description="The file it was read from, as named.")
    session_key: str = strawberry.field(description="The tool's own id of the session.")
    cwd: Optional[str] = strawberry.field(description="The working directory.")
    project: Optional[str] = strawberry.field(description=(
        "The working directory's last part."))
    git_branch: Optional[str]
    models: list[str] = strawberry.field(description="The models it used, first use first.")
    first_at: datetime = strawberry.field(description="Its first turn's time.")
    last_at: datetime = strawberry.field(description=(
        "Its last turn's (or compaction's) time, as of its last import."))


def source_out(source: Any) -> Optional[SessionSource]:
    if source is None:
        return None
    return SessionSource(
        tool=source["tool"], version=source.get("version"), file=source["file"],
        session_key=source["session"], cwd=source.get("cwd"), project=source.get("project"),
        git_branch=source.get("git_branch"), models=list(source.get("models") or []),
        first_at=datetime.fromisoformat(source["first_at"]),
        last_at=datetime.fromisoformat(source["last_at"]))


@strawberry.type
class Session(Node):
    title: Optional[str] = strawberry.field(description=(
        "An imported session's is its tool's title, else its first prompt; a later import "
        "of the file replaces it only while nobody retitled the session."))
    source: Optional[SessionSource] = strawberry.field(description=(
        "Where an imported session came from, as its file says; null for a native one."))
    tool: Optional[str] = strawberry.field(default=None, description=(
        "The tool an imported session was written by (claude-code, pi or codex); null for a "
        "native one."))
    tool_version: Optional[str] = strawberry.field(default=None, description=(
        "The tool's version, when its file records it."))
    project: Optional[str] = strawberry.field(default=None, description=(
        "The working directory: an imported session's, or the one a native session was "
        "created with."))
    git_branch: Optional[str] = strawberry.field(default=None, description=(
        "The git branch its tool worked on, when the file records it."))
    models: list[str] = strawberry.field(default_factory=list, description=(
        "The models it used, first use first: an imported session's file's, then those of "
        "the calls recorded in ctxdag."))
    first_activity_at: datetime = strawberry.field(description=(
        "An imported session's first turn (or compaction); a native one's creation."))
    last_activity_at: datetime = strawberry.field(description=(
        "When a turn or summary was last written: an imported session's last turn (or "
        "compaction) as its file says, later when the session went on in ctxdag."))
    source_file: Optional[str] = strawberry.field(default=None, description=(
        "The file an imported session was last read from, as named."))
    created_at: datetime
    updated_at: datetime
    extra_meta: JSON = strawberry.field(description=(
        "The client's map, plus _last_summary_id / _last_summary_text naming the active "
        "summary."))
    head_id: strawberry.ID
    root_id: strawberry.ID
    node_count: int
    summary_strategy: str = strawberry.field(description=(
        "Which summaries its renders consider: \"rolling\" (the active summary alone) or "
        "\"branch\" (each head: the deepest summary compacted on its own path)."))
    active_summary_id: strawberry.ID | None = strawberry.field(default=None)
    recall: bool = strawberry.field(default=False, description=(
        "Whether its turns offer the model the recall tools history_search and "
        "history_expand (docs/guides/recall.md)."))
    last_event_seq: int = strawberry.field(default=0, description=(
        "The seq of the session's newest event when this was read: subscribe with it as "
        "`after` to hear of everything that happens after what this read shows."))

    @strawberry.field
    async def head(self, info: Info) -> Message:
        return message_out(await info.context.loaders.nodes.load(str(self.head_id)))

    @strawberry.field
    async def root(self, info: Info) -> Message:
        return message_out(await info.context.loaders.nodes.load(str(self.root_id)))

    @strawberry.field
    async def active_summary(self, info: Info) -> Optional[Summary]:
        if self.active_summary_id is None:
            return None
        return summary_out(await info.context.loaders.summaries.load(str(self.active_summary_id)))

    @strawberry.field(description="Prompt-cache accounting of all the session's calls.")
    async def cache_usage(self, info: Info) -> CacheUsage:
        return cache_usage_out(await info.context.loaders.cache_totals.load((str(self.id), None)))

    @strawberry.field(description="Every user branch: live tips that are neither summaries "
                                  "nor spawned side branches.")
    async def branches(self, info: Info) -> list[Branch]:
        branches = await info.context.loaders.branches.load(str(self.id))
        return [branch_out(b) for b in charged(info, branches)]

    @strawberry.field(description="What the model reads from a head (default: HEAD).")
    async def render(self, info: Info, head_id: Optional[strawberry.ID] = None
                     ) -> RenderedContext:
        key = (str(self.id), str(head_id) if head_id is not None else None)
        return rendered_out(await info.context.loaders.renders.load(key))

    @strawberry.field(description=(
        "Every live node, for drawing: one request however large the session. With "
        "`includeDeleted`, the nodes deleted with their branches too (marked `deleted`)."))
    async def graph(self, info: Info, include_deleted: bool = False) -> SessionGraph:
        rows = await info.context.loaders.graphs.load((str(self.id), include_deleted))
        return graph_out(rows)

    @strawberry.field(description=(
        "The tool set in force at a head (default: HEAD): the latest setTools that is the "
        "session's or anchored on the head's chain; null when none applies."))
    async def tool_set(self, info: Info, head_id: Optional[strawberry.ID] = None
                       ) -> Optional[ToolSetVersion]:
        version = await info.context.services.ledger.tool_sets.in_force(
            str(self.id), None if head_id is None else str(head_id))
        return None if version is None else tool_set_out(version)

    @strawberry.field(description="Every version of its tool set (setTools), oldest first.")
    async def tool_set_history(self, info: Info) -> list[ToolSetVersion]:
        versions = await info.context.loaders.tool_set_histories.load(str(self.id))
        return [tool_set_out(v) for v in charged(info, versions)]

    @strawberry.field(description="The session's model calls, oldest first.")
    async def model_calls(self, info: Info, first: Optional[int] = None,
                          after: Optional[str] = None, last: Optional[int] = None,
                          before: Optional[str] = None) -> "ModelCallConnection":
        win = window(first, after, last, before, maximum=MAX_CALLS_PAGE)
        page = await info.context.loaders.session_calls.load((str(self.id), win))
        return connection_out(page, call_out, total_count=page.total)

    @strawberry.field(description="The session's first 1,000 model calls, oldest first.",
                      deprecation_reason="Use modelCalls: it pages.")
    async def calls(self, info: Info) -> list[ModelCall]:
        page = await info.context.loaders.session_calls.load(
            (str(self.id), Window(MAX_CALLS_PAGE)))
        return [call_out(c) for c in page.items]


def session_out(s: store.Session) -> Session:
    return Session(id=s.id, title=s.title, created_at=s.created_at, updated_at=s.updated_at,
                   extra_meta=s.extra_meta, head_id=s.head_id, root_id=s.root_id,
                   node_count=s.node_count, summary_strategy=s.summary_strategy,
                   active_summary_id=s.active_summary_id, recall=s.recall,
                   last_event_seq=s.last_event_seq, source=source_out(s.source),
                   tool=s.tool, tool_version=s.tool_version, project=s.project,
                   git_branch=s.git_branch, models=list(s.models),
                   first_activity_at=s.first_activity_at, last_activity_at=s.last_activity_at,
                   source_file=s.source_file)


@strawberry.type(description="Where a page lies in its list (Relay's cursor connections).")
class PageInfo:
    start_cursor: Optional[str]
    end_cursor: Optional[str]
    has_next_page: bool = strawberry.field(description=(
        "Items lie after this page. When paging backwards (`last`), true when a `before` "
        "cursor was given."))
    has_previous_page: bool = strawberry.field(description=(
        "Items lie before this page. When paging forwards (`first`), true when an `after` "
        "cursor was given."))


def page_info_out(page: Page) -> PageInfo:
    return PageInfo(start_cursor=page.start_cursor, end_cursor=page.end_cursor,
                    has_next_page=page.has_next, has_previous_page=page.has_previous)


Item = TypeVar("Item")


@strawberry.type
class Edge(Generic[Item]):
    cursor: str
    node: Item


@strawberry.type(description="A page of a list that grows: `first`/`after` page forwards, "
                             "`last`/`before` backwards.")
class Connection(Generic[Item]):
    edges: list[Edge[Item]]
    nodes: list[Item] = strawberry.field(description="The edges' nodes, without cursors.")
    page_info: PageInfo
    counted: strawberry.Private[Callable[[], Awaitable[int]]]

    @strawberry.field(description="The length of the whole list.")
    async def total_count(self) -> int:
        return await self.counted()


SessionConnection = Connection[Session]
ModelCallConnection = Connection[ModelCall]


def connection_out(page: Page, out: Callable[[Any], Item], *, total_count: int | None = None,
                   count: Callable[[], Awaitable[int]] | None = None) -> Connection[Item]:
    """A page as a connection; `count` is awaited only when totalCount is asked for."""
    nodes = [out(i) for i in page.items]

    async def counted() -> int:
        return total_count if count is None else await count()

    return Connection(edges=[Edge(cursor=c, node=n) for n, c in zip(nodes, page.cursors)],
                      nodes=nodes, page_info=page_info_out(page), counted=counted)


@strawberry.type(description="A call that read a node, with where the node was in its prompt.")
class CallReadingEdge:
    cursor: str
    node: ModelCall
    position: int = strawberry.field(description="The node's place in the prompt, from 0.")


@strawberry.type(description="A page of the calls that read a node.")
class CallReadingConnection:
    edges: list[CallReadingEdge]
    nodes: list[ModelCall]
    page_info: PageInfo
    total_count: int = strawberry.field(description="How many calls read the node.")


@strawberry.type
class Compaction:
    status: CompactionStatus
    summary: Optional[Summary]
    covered_count: int
    tokens_before: int
    tokens_after: int
    message: Optional[str]
    local_command: Optional[str] = strawberry.field(
        description="A hint to show the user when nothing was compacted.")
    error_code: Optional[str]
    split_turn: bool = strawberry.field(default=False, description=(
        "No user turn opened a retained tail that fits (an autonomous tool run): the cut "
        "lies inside the turn, before an assistant message that follows a complete tool "
        "pair, and `message` says so; with `upTo`, the retained tail opens on no user "
        "turn."))
    covered_ids: list[strawberry.ID] = strawberry.field(default_factory=list, description=(
        "The turns the summary covers (a preview: would cover), in chain order: the "
        "previous summary's segment extended by the newly covered turns."))
    retained_ids: list[strawberry.ID] = strawberry.field(default_factory=list, description=(
        "The head's chain below the segment, kept verbatim."))
    summary_text: Optional[str] = strawberry.field(default=None, description=(
        "The summary's text (a preview: the text a compaction would write)."))
    summarizer_input_tokens: Optional[int] = strawberry.field(default=None, description=(
        "The summarizer call's input tokens, as the summarizer reports them (null: it "
        "reports none, as the offline one)."))
    summarizer_output_tokens: Optional[int] = strawberry.field(default=None, description=(
        "The summarizer call's output tokens, as the summarizer reports them."))
    nested: Optional[Summary] = strawberry.field(default=None, description=(
        "Segmented strategy: the nested summary this compaction's merge wrote, when the "
        "stand-ins passed CTXDAG_SEGMENT_MERGE_SHARE of the context window (null: no merge "
        "was due, or it failed)."))
    merge_error: Optional[str] = strawberry.field(default=None, description=(
        "Why a due merge failed; the compaction itself is written."))


@strawberry.type(description="An undone compaction.")
class Uncompaction:
    summary: Summary
    restored_summary_id: Optional[strawberry.ID] = strawberry.field(
        description="The session's active summary now (the one the retired summary replaced, "
                    "unless that one is gone too).")
    session: Session


@strawberry.type(description=(
    "A branch summary written: the carry node appended after the target head, standing for "
    "the turns of the branch it summarizes."))
class CarryOver:
    node: Message = strawberry.field(description="The carry node (role CARRY).")
    carried_ids: list[strawberry.ID] = strawberry.field(description=(
        "The turns it summarizes: the source tip's chain below its common ancestor with "
        "the target, in chain order."))
    head_moved: bool = strawberry.field(description="HEAD moved onto the carry node.")
    summarizer_input_tokens: Optional[int] = strawberry.field(description=(
        "The summarizer call's input tokens, as it reports them (null: it reports none)."))
    summarizer_output_tokens: Optional[int]
    session: Session


def compaction_out(c: CompactionResult) -> Compaction:
    return Compaction(status=c.status,
                      summary=summary_out(c.summary) if c.summary else None,
                      covered_count=c.covered_count, tokens_before=c.tokens_before,
                      tokens_after=c.tokens_after, message=c.message, split_turn=c.split_turn,
                      local_command=c.local_command, error_code=c.error_code,
                      covered_ids=list(c.covered_ids), retained_ids=list(c.retained_ids),
                      summary_text=c.summary_text,
                      summarizer_input_tokens=c.summarizer_input_tokens,
                      summarizer_output_tokens=c.summarizer_output_tokens,
                      nested=summary_out(c.nested) if c.nested else None,
                      merge_error=c.merge_error)


@strawberry.type(description="A turn: its opening node, the reply, and the call behind it.")
class Turn:
    user_node: Optional[Message]
    reply: Optional[Message]
    call_id: Optional[strawberry.ID]
    compaction: Optional[Compaction]
    error: Optional[str] = strawberry.field(description="Why there is no reply.")
    error_code: Optional[str]
    open_tool_use_ids: list[str] = strawberry.field(description=(
        "The tool uses the reply opens (it stopped to call tools): run them and answer "
        "with `submitToolResults`. Empty when the model answered without tools."))
    head_moved: Optional[bool] = strawberry.field(default=None, description=(
        "Whether HEAD is on the reply: false when HEAD had moved away from the prompt's "
        "tip before completeTurn (the reply then ends a branch of its own). Null when "
        "there is no reply."))
    replayed: bool = strawberry.field(default=False, description=(
        "completeTurn only: answered from an earlier completion with the same clientKey; "
        "nothing was written."))

    @strawberry.field
    async def call(self, info: Info) -> Optional[ModelCall]:
        if self.call_id is None:
            return None
        return call_out(await info.context.loaders.calls.load(str(self.call_id)))


def turn_out(t: TurnResult) -> Turn:
    return Turn(user_node=message_out(t.user_node) if t.user_node else None,
                reply=message_out(t.reply) if t.reply else None, call_id=t.call_id,
                compaction=compaction_out(t.compaction) if t.compaction else None,
                error=t.error.message if t.error else None,
                error_code=t.error.code if t.error else None,
                open_tool_use_ids=t.open_tool_use_ids, head_moved=t.head_moved,
                replayed=t.replayed)
