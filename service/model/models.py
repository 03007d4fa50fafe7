"""The ledger's records: frozen, built from query rows by one function each."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..errors import BadInput
from ..tokens import estimate_tokens
from .ids import new_id
from .kinds import Purpose, Role, SummaryStrategy, native
from .validate import (
    Limits, enum_value, error_message, identifier, name, optional_count, optional_identifier,
    optional_name, read_ids,
)

if TYPE_CHECKING:
    from .blocks import Block


@dataclass(frozen=True)
class Session:
    id: str
    tenant: str
    title: str | None
    created_at: datetime
    updated_at: datetime
    user_meta: Mapping[str, Any]  # what clients stored; keys never start with '_'
    root_id: str
    head_id: str
    node_count: int
    meta_version: int
    summary_strategy: str  # which summaries count: SummaryStrategy's values
    active_summary_id: str | None
    active_summary_text: str | None
    recall: bool = False  # the model is offered the recall tools (docs/guides/recall.md)
    # The seq of its newest event when it was read: where its news stood, not part of the
    # conversation (an imported session's sequence starts afresh).
    last_event_seq: int = field(default=0, compare=False)
    # Where an imported session came from (service/transcripts/origin.py); None: native.
    source: Mapping[str, Any] | None = None
    # What a session list shows and filters (service/model/listing.py): an imported
    # session's from its file, a native one's from its writes.
    tool: str | None = None
    tool_version: str | None = None
    project: str | None = None  # the working directory
    git_branch: str | None = None
    models: tuple[str, ...] = ()
    source_file: str | None = None
    first_activity_at: datetime | None = None
    last_activity_at: datetime | None = None

    @property
    def extra_meta(self) -> dict[str, Any]:
        """The client's map plus ctxdag's reserved keys naming the active summary."""
        meta = dict(self.user_meta)
        if self.active_summary_id is not None:
            meta["_last_summary_id"] = self.active_summary_id
            meta["_last_summary_text"] = self.active_summary_text
        return meta


@dataclass(frozen=True)
class RedactedMedium:
    """A medium a redacted node's blocks named: its hash and size are kept, its data is not."""

    sha256: str
    media_type: str
    bytes: int


@dataclass(frozen=True)
class Redaction:
    """When and why a node's content was erased, and the media it named."""

    at: datetime
    reason: str
    media: tuple[RedactedMedium, ...] = ()


@dataclass(frozen=True)
class Node:
    id: str
    session_id: str
    role: Role
    content: str
    created_at: datetime
    tokens: int
    metadata: Mapping[str, Any]
    seq: int  # display order only; never decides coverage or ancestry
    depth: int  # edges from ROOT along PREDECESSOR
    predecessor_id: str | None
    caller_id: str | None
    side_branch: bool  # on a spawned side branch: never a user branch
    deleted_at: datetime | None
    fork_of: str | None = None  # the node this one was retried or edited from
    out_of_context: bool = False  # no render reads it (docs/guides/importing-sessions.md)
    # Neo4j's element id, as read: lets a call recorded from a render find its reads directly.
    element_id: str | None = field(default=None, compare=False, repr=False)
    # The stored `blocks` text (service/model/blocks.py); None for a plain-text message.
    blocks_json: str | None = field(default=None, repr=False)
    redaction: "Redaction | None" = None  # set once the node was redacted (redaction.py)

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    @cached_property
    def blocks(self) -> tuple["Block", ...]:
        """The message's content blocks; a plain-text message is one text block."""
        from .blocks import loads

        return loads(self.blocks_json, self.content)

    @cached_property
    def media_hashes(self) -> tuple[str, ...]:
        """The stored media its blocks name, each once, in order: read once per node, not
        once per prompt that holds it."""
        from .blocks import media_hashes

        return tuple(media_hashes(self.blocks)) if self.blocks_json is not None else ()


@dataclass(frozen=True)
class Appended:
    node: Node
    head_moved: bool
    previous_head_id: str | None = None
    summary_version: int = 0  # the session's summary version the write saw, under its lock
    # With append_message(offer_tools=True): the ToolSetVersion in force at the node (None:
    # the session has none there); not read otherwise.
    tool_set: Any = None


@dataclass(frozen=True)
class Carried:
    """A carry-over written: the carry node and the turns it summarizes, in chain order."""

    node: Node
    carried_ids: tuple[str, ...]
    head_moved: bool
    previous_head_id: str | None


@dataclass(frozen=True)
class HeadMove:
    session_id: str
    previous_head_id: str
    head_id: str

    @property
    def moved(self) -> bool:
        return self.previous_head_id != self.head_id


@dataclass(frozen=True)
class Branch:
    tip: Node
    length: int  # nodes from ROOT to the tip, both included
    is_head: bool  # HEAD is the tip itself
    holds_head: bool  # HEAD lies on this branch's chain (after a rewind it may sit mid-chain)
    summary_id: str | None = None  # the summary the tip's render uses
    name: str | None = None  # the branch's name (NAMES), None when unnamed
    # Every summary the tip's render uses, in prompt order (segmented: one per segment).
    stand_in_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeletedBranch:
    session_id: str
    tip_id: str
    fork_point_id: str
    deleted_ids: tuple[str, ...]
    head: HeadMove


def _instant(value: Any) -> datetime:
    """A node's created_at as node_map sends it, [epoch seconds, nanosecond, offset
    seconds], as the driver's own conversion would give it (nanoseconds truncated to
    microseconds, the offset kept); a driver DateTime is converted as it is."""
    if not isinstance(value, list):
        return native(value)
    seconds, nanosecond, offset = value
    return (datetime.fromtimestamp(seconds, timezone(timedelta(seconds=offset)))
            + timedelta(microseconds=nanosecond // 1000))


def session_from_row(row: Mapping[str, Any]) -> Session:
    active = row.get("active_summary") or {}
    return Session(
        id=row["id"],
        tenant=row["tenant"],
        title=row.get("title"),
        created_at=native(row["created_at"]),
        updated_at=native(row["updated_at"]),
        user_meta=json.loads(row.get("extra_meta") or "{}"),
        root_id=row["root_id"],
        head_id=row["head_id"],
        node_count=row["next_seq"],
        meta_version=row.get("meta_version") or 0,
        summary_strategy=row.get("summary_strategy") or "rolling",
        active_summary_id=active.get("id"),
        active_summary_text=active.get("content"),
        recall=bool(row.get("recall")),
        last_event_seq=row.get("next_event_seq") or 0,
        source=json.loads(row["source"]) if row.get("source") else None,
        tool=row.get("tool"), tool_version=row.get("tool_version"), project=row.get("project"),
        git_branch=row.get("git_branch"), models=tuple(row.get("models") or ()),
        source_file=row.get("source_file"),
        first_activity_at=native(row.get("first_activity_at") or row["created_at"]),
        last_activity_at=native(row.get("last_activity_at") or row["updated_at"]),
    )


def node_from_row(row: Mapping[str, Any]) -> Node:
    return Node(
        id=row["id"],
        session_id=row["session_id"],
        role=Role(row["role"]),
        content=row["content"],
        created_at=_instant(row["created_at"]),
        tokens=row["tokens"],
        metadata=json.loads(row.get("metadata") or "{}"),
        seq=row["seq"],
        depth=row["depth"],
        predecessor_id=row.get("predecessor_id"),
        caller_id=row.get("caller_id"),
        side_branch=bool(row.get("side_branch")),
        deleted_at=native(row.get("deleted_at")),
        fork_of=row.get("fork_of"),
        out_of_context=bool(row.get("out_of_context")),
        element_id=row.get("element_id"),
        blocks_json=row.get("blocks"),
        redaction=_redaction(row),
    )


def _redaction(row: Mapping[str, Any]) -> Redaction | None:
    if row.get("redacted_at") is None:
        return None
    media = json.loads(row.get("redacted_media") or "[]")
    return Redaction(native(row["redacted_at"]), row["redaction_reason"],
                     tuple(RedactedMedium(m["sha256"], m["media_type"], m["bytes"])
                           for m in media))


@dataclass(frozen=True)
class Summary:
    """A summary node: the stand-in for a contiguous chain segment of real turns."""

    node: Node
    covers_ids: tuple[str, ...]  # chain order; never names a summary
    superseded: bool  # stored: not the session's active (most recent unretired) summary
    strategy: str  # the session's strategy when it was written
    instructions: str | None = None  # the focus instructions it was compacted with
    retired: bool = False  # undone by uncompact: applies nowhere, kept for provenance
    absorbed_id: str | None = None  # the summary it relayed and extended
    compacted_head_id: str | None = None  # the head whose render was compacted
    retained_ids: tuple[str, ...] | None = None  # that head's chain below the segment
    # Segmented: the summaries a nested summary merged, chain order (their segments tile its
    # own); empty for every other summary.
    nested_ids: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return self.node.id

    @property
    def content(self) -> str:
        return self.node.content


@dataclass(frozen=True)
class Rendered:
    """The node list a head renders to, in prompt order."""

    head_id: str
    nodes: tuple[Node, ...]
    summary_id: str | None  # the summary standing in for its segment, if the rule applied
    strategy: str = "rolling"  # the session's summary strategy the render followed
    summary_version: int = 0  # the session's summary version the render saw (compaction's race guard)
    # How many covered turns follow the summary because they are pinned (with the other half
    # of their tool pairs): nodes[2:2 + kept_count] when a summary applies.
    kept_count: int = 0
    pinned_ids: frozenset[str] = frozenset()  # the session's pinned nodes (any branch)
    # Every summary standing in, in prompt order (segmented: one per segment; otherwise the
    # summary alone, or none); summary_id is the last of them.
    stand_in_ids: tuple[str, ...] = ()
    recall: bool = False  # the session's recall setting (docs/guides/recall.md)
    # The nodes kept out of the context (imported aborted replies, their results) that lie
    # among the rendered ones: (id, the rendered node after it, or None after the last).
    hidden: tuple[tuple[str, str | None], ...] = ()

    def chain_ids(self, ids: Sequence[str], through_end: bool = False) -> list[str]:
        """Rendered nodes `ids`, consecutive in the render, as the chain segment they span:
        each preceded by the hidden nodes right before it, and with `through_end` followed
        by those after the last rendered node."""
        if not self.hidden:
            return list(ids)
        before: dict[str | None, list[str]] = {}
        for hidden_id, next_id in self.hidden:
            before.setdefault(next_id, []).append(hidden_id)
        spanned = [hidden for i in ids for hidden in (*before.get(i, ()), i)]
        return spanned + (before.get(None, []) if through_end else [])

    @property
    def lead(self) -> int:
        """Where the uncovered turns start in `history`: after the (last) summary and the
        covered turns kept verbatim after it (0 when no summary applies)."""
        return self.last_stand_in + 1 + self.kept_count if self.summary_id is not None else 0

    @property
    def last_stand_in(self) -> int:
        """The index in `history` of the summary standing in last (0 when none applies).
        Under rolling and branch it is 0 too, unless turns an earlier segment held render
        before it (a session switched from segmented)."""
        if self.summary_id is None:
            return 0
        return next(i for i, n in enumerate(self.history) if n.id == self.summary_id)

    @property
    def node_ids(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes)

    @property
    def tokens(self) -> int:
        """The stored (heuristic) estimate; see context/tokens.py for provider counts."""
        return sum(n.tokens for n in self.nodes)

    @property
    def history(self) -> tuple[Node, ...]:
        """Everything after ROOT: the summary standing in (if any) and the turns."""
        return self.nodes[1:]


def summary_from_row(row: Mapping[str, Any], covers_ids: Sequence[str]) -> Summary:
    return Summary(
        node=node_from_row(row),
        covers_ids=tuple(covers_ids),
        superseded=bool(row.get("superseded_summary")),
        strategy=row.get("strategy") or "rolling",
        instructions=row.get("instructions"),
        retired=row.get("retired_at") is not None,
        absorbed_id=row.get("absorbed_id"),
        compacted_head_id=row.get("compacted_head_id"),
        retained_ids=None if row.get("retained_ids") is None else tuple(row["retained_ids"]),
        nested_ids=tuple(row.get("nested_ids") or ()),
    )


def tools_json(tools: Sequence[Any]) -> str | None:
    """The tools offered (each with name, description and input_schema), as the canonical
    JSON text a call records (None: none offered)."""
    if not tools:
        return None
    return json.dumps([{"name": t.name, "description": t.description,
                        "input_schema": dict(t.input_schema)} for t in tools],
                      ensure_ascii=False, separators=(",", ":"), sort_keys=True)


# A node's metadata key naming the nodes its text quotes (a recall tool's result): every
# call whose prompt holds the node reads them too (CallRecord.of_prompt).
RECALLED_IDS = "recalled_ids"


@dataclass(frozen=True)
class PromptReads:
    """What a call whose prompt is a node list reads: the prompt's nodes, then the turns its
    recall results quote that the prompt does not hold itself (the last `recalled`)."""

    ids: tuple[str, ...]
    element_ids: tuple[str | None, ...]  # None where unknown (a recalled turn)
    recalled: int = 0

    @classmethod
    def of(cls, nodes: Sequence[Node]) -> "PromptReads":
        prompt = tuple(n.id for n in nodes)
        held = set(prompt)
        recalled = tuple(dict.fromkeys(
            i for n in nodes for i in n.metadata.get(RECALLED_IDS) or () if i not in held))
        return cls(prompt + recalled,
                   tuple(n.element_id for n in nodes) + (None,) * len(recalled), len(recalled))


@dataclass(frozen=True)
class CallRecord:
    """A model call to record: what its prompt contained (read_ids, in prompt order)."""

    purpose: Purpose
    provider: str
    model: str | None
    read_ids: tuple[str, ...]
    started_at: datetime
    finished_at: datetime
    head_id: str | None = None  # the head whose render was the prompt, when it was one
    input_tokens: int | None = None
    output_tokens: int | None = None
    error_code: str | None = None
    error_message: str | None = None
    id: str = field(default_factory=lambda: new_id("cal"))
    # The reads' element ids when the prompt was a render (None where unknown): the write
    # finds those nodes directly instead of through the id index, and checks their ids.
    read_element_ids: tuple[str | None, ...] | None = None
    # The tools the model was offered, as canonical JSON text (part of what it read): stored
    # once per tenant and content hash, the call linked to them.
    tools_json: str | None = None
    # Prompt caching as the provider reported it (None: not reported).
    cache_creation_input_tokens: int | None = None
    cache_read_input_tokens: int | None = None
    # How many of read_ids, at their end, are recalled turns: nodes the prompt quotes inside
    # a recall tool's result (RECALLED_IDS), not messages of their own (docs/guides/recall.md).
    recalled_reads: int = 0

    @property
    def tools_sha256(self) -> str | None:
        if self.tools_json is None:
            return None
        return hashlib.sha256(self.tools_json.encode("utf-8")).hexdigest()

    @classmethod
    def of_prompt(cls, purpose: Purpose, provider: str, model: str | None,
                  nodes: Sequence[Node], started_at: datetime, finished_at: datetime,
                  **fields: Any) -> "CallRecord":
        """A call whose prompt was `nodes` (a render, or nodes read from the store).

        Its reads are the prompt's nodes, then the turns its recall results quote that the
        prompt does not hold itself: the call read those too."""
        reads = PromptReads.of(nodes)
        return cls(purpose, provider, model, reads.ids, started_at, finished_at,
                   read_element_ids=reads.element_ids, recalled_reads=reads.recalled,
                   **fields)

    def as_param(self) -> dict[str, Any]:
        return {
            "id": self.id, "purpose": self.purpose.value, "provider": self.provider,
            "model": self.model, "read_ids": list(self.read_ids), "head_id": self.head_id,
            "read_element_ids": (None if self.read_element_ids is None
                                 else list(self.read_element_ids)),
            "started_at": self.started_at, "finished_at": self.finished_at,
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "error_code": self.error_code, "error_message": self.error_message,
            "tools": self.tools_json, "tools_sha256": self.tools_sha256,
            "tools_tokens": 0 if self.tools_json is None else estimate_tokens(self.tools_json),
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "recalled_reads": self.recalled_reads,
        }


def validate_call(record: CallRecord, limits: Limits) -> None:
    """Every field of a model call before it is written."""
    identifier(record.id, "call id")
    purpose = enum_value(Purpose, record.purpose, "call purpose")
    name(record.provider, "provider")
    optional_name(record.model, "model")
    # The ids of a call the service makes are those of nodes it read from the store: each
    # is checked as an id only when a runtime names them (and a turn holds thousands).
    read_ids(record.read_ids, limits, purpose, each=purpose is Purpose.EXTERNAL)
    if record.read_element_ids is not None:
        if len(record.read_element_ids) != len(record.read_ids):
            raise BadInput("a call's read element ids must match its read ids one for one")
        if purpose is Purpose.EXTERNAL:
            for element_id in record.read_element_ids:
                optional_identifier(element_id, "each read element id")
    optional_identifier(record.head_id, "head id")
    optional_count(record.input_tokens, "input_tokens")
    optional_count(record.output_tokens, "output_tokens")
    optional_count(record.cache_creation_input_tokens, "cache_creation_input_tokens")
    optional_count(record.cache_read_input_tokens, "cache_read_input_tokens")
    optional_name(record.error_code, "error code")
    error_message(record.error_message, limits)


@dataclass(frozen=True)
class Call:
    """A recorded model call, with the ids its prompt contained in prompt order."""

    id: str
    session_id: str
    purpose: Purpose
    provider: str
    model: str | None
    head_id: str | None
    read_ids: tuple[str, ...] | None  # prompt order; None where a listing did not load them
    read_count: int
    output_id: str | None
    started_at: datetime
    finished_at: datetime
    input_tokens: int | None
    output_tokens: int | None
    error_code: str | None
    error_message: str | None
    tools_sha256: str | None = None  # the tools it was offered (Calls.tool_sets), if any
    cache_creation_input_tokens: int | None = None  # as the provider reported them
    cache_read_input_tokens: int | None = None
    # The shared prefix with the session's previous call (docs/concepts/provenance.md),
    # written with the call; None on calls stored before it was.
    previous_call_id: str | None = None
    shared_prefix_reads: int | None = None
    shared_prefix_tokens: int | None = None
    prompt_tokens: int | None = None  # its prompt's stored tokens and its tools'
    recalled_reads: int = 0  # the last of read_ids that are recalled turns (CallRecord)

    @property
    def prompt_count(self) -> int:
        """How many of its reads are the prompt's own nodes (the rest were recalled)."""
        return self.read_count - self.recalled_reads

    @property
    def prompt_ids(self) -> tuple[str, ...]:
        """The prompt's own reads, in prompt order (read_ids loaded)."""
        return (self.read_ids or ())[:self.prompt_count]

    @property
    def error(self) -> str | None:
        return f"{self.error_code}: {self.error_message}" if self.error_code else None


def call_from_row(row: Mapping[str, Any]) -> Call:
    return Call(
        id=row["id"], session_id=row["session_id"], purpose=Purpose(row["purpose"]),
        provider=row["provider"], model=row.get("model"), head_id=row.get("head_id"),
        read_ids=tuple(row["read_ids"]) if row.get("read_ids") is not None else None,
        read_count=row.get("read_count") or 0, output_id=row.get("output_id"),
        started_at=native(row["started_at"]), finished_at=native(row["finished_at"]),
        input_tokens=row.get("input_tokens"), output_tokens=row.get("output_tokens"),
        error_code=row.get("error_code"), error_message=row.get("error_message"),
        tools_sha256=row.get("tools_sha256"),
        cache_creation_input_tokens=row.get("cache_creation_input_tokens"),
        cache_read_input_tokens=row.get("cache_read_input_tokens"),
        previous_call_id=row.get("previous_call_id"),
        shared_prefix_reads=row.get("shared_prefix_reads"),
        shared_prefix_tokens=row.get("shared_prefix_tokens"),
        prompt_tokens=row.get("prompt_tokens"),
        recalled_reads=row.get("recalled_reads") or 0,
    )
