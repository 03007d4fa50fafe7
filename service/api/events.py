"""Session events as GraphQL types: an interface with one type per kind."""
import enum
from datetime import datetime
from typing import Optional

import strawberry

from ..errors import BadInput, EventsExpired
from ..store import events
from .types import Role


@strawberry.enum
class EventType(enum.Enum):
    COMPACTION_STARTED = "compaction_started"
    COMPACTION_FINISHED = "compaction_finished"
    COMPACTION_FAILED = "compaction_failed"
    HEAD_MOVED = "head_moved"
    NODE_APPENDED = "node_appended"
    BRANCH_DELETED = "branch_deleted"
    SUMMARY_RETIRED = "summary_retired"
    SUMMARY_STRATEGY_CHANGED = "summary_strategy_changed"
    NODE_LABELED = "node_labeled"
    NODE_UNLABELED = "node_unlabeled"
    BRANCH_NAMED = "branch_named"
    BRANCH_UNNAMED = "branch_unnamed"
    NODE_PINNED = "node_pinned"
    NODE_UNPINNED = "node_unpinned"
    BRANCH_CARRIED = "branch_carried"
    NODE_REDACTED = "node_redacted"


@strawberry.enum(description="What started a compaction.")
class CompactionTrigger(enum.Enum):
    MANUAL = "manual"
    AUTO = "auto"
    PASSIVE = "passive"


@strawberry.interface(description=(
    "Something that happened to a session, stored with the change it announces."))
class SessionEvent:
    id: strawberry.ID = strawberry.field(description="Unique to this event: session:seq.")
    seq: int = strawberry.field(description=(
        "The session's event number: 1, 2, … in commit order, without gaps. Give the last "
        "one received as `after` to resume."))
    type: EventType
    session_id: strawberry.ID
    at: datetime = strawberry.field(description="When its change committed.")


@strawberry.type
class CompactionStarted(SessionEvent):
    trigger: CompactionTrigger


@strawberry.type
class CompactionFinished(SessionEvent):
    trigger: CompactionTrigger
    summary_id: strawberry.ID
    covered_count: int
    tokens_before: int
    tokens_after: int
    token_delta: int


@strawberry.type
class CompactionFailed(SessionEvent):
    trigger: CompactionTrigger
    reason: str
    code: str


@strawberry.type
class HeadMoved(SessionEvent):
    previous_head_id: strawberry.ID
    head_id: strawberry.ID


@strawberry.type
class NodeAppended(SessionEvent):
    node_id: strawberry.ID
    role: Role
    predecessor_id: Optional[strawberry.ID]


@strawberry.type(description="A branch was deleted (its nodes are kept for provenance).")
class BranchDeleted(SessionEvent):
    tip_id: strawberry.ID
    fork_point_id: strawberry.ID
    deleted_ids: list[strawberry.ID] = strawberry.field(
        description="The nodes and summaries deleted with it.")


@strawberry.type(description="A compaction was undone: the summary applies nowhere now.")
class SummaryRetired(SessionEvent):
    summary_id: strawberry.ID
    restored_summary_id: Optional[strawberry.ID] = strawberry.field(
        description="The session's active summary now.")


@strawberry.type(description="The session's summary strategy changed (so may its renders).")
class SummaryStrategyChanged(SessionEvent):
    strategy: str


@strawberry.type(description="A node was labeled (or its label replaced).")
class NodeLabeled(SessionEvent):
    node_id: strawberry.ID
    label: str


@strawberry.type(description="A node's label was removed.")
class NodeUnlabeled(SessionEvent):
    node_id: strawberry.ID


@strawberry.type(description=(
    "A branch was named (or renamed); the name follows the branch as it grows."))
class BranchNamed(SessionEvent):
    tip_id: strawberry.ID = strawberry.field(description="The branch's tip when it was named.")
    name: str


@strawberry.type(description="A branch's name was removed.")
class BranchUnnamed(SessionEvent):
    tip_id: strawberry.ID


@strawberry.type(description="A node was pinned: inside a covered segment it renders verbatim.")
class NodePinned(SessionEvent):
    node_id: strawberry.ID


@strawberry.type(description="A node was unpinned.")
class NodeUnpinned(SessionEvent):
    node_id: strawberry.ID


@strawberry.type(description=(
    "A branch's summary was carried into another (announced after the carry node's "
    "node_appended, and its head_moved when HEAD moved onto it)."))
class BranchCarried(SessionEvent):
    node_id: strawberry.ID = strawberry.field(description="The carry node.")
    from_id: strawberry.ID = strawberry.field(description="The tip of the branch summarized.")
    into_id: strawberry.ID = strawberry.field(description="The head it was appended after.")
    carried_count: int = strawberry.field(description="The turns it summarizes.")


@strawberry.type(description=(
    "A node's content was erased for good (`redact`); the render of any head holding it "
    "shows the redaction marker in its place."))
class NodeRedacted(SessionEvent):
    node_id: strawberry.ID
    reason: str
    summary_ids: list[strawberry.ID] = strawberry.field(description=(
        "The summaries and carry nodes whose text may quote what was erased, newest first."))


EVENT_TYPES = (CompactionStarted, CompactionFinished, CompactionFailed, HeadMoved, NodeAppended,
               BranchDeleted, SummaryRetired, SummaryStrategyChanged, NodeLabeled,
               NodeUnlabeled, BranchNamed, BranchUnnamed, NodePinned, NodeUnpinned,
               BranchCarried, NodeRedacted)


async def replay_start(ledger_events: events.Events, session_id: str, after: int | None) -> int:
    """The seq a subscription starts after: `after` when those events are still kept, the
    session's last event when none is given."""
    bounds = await ledger_events.bounds(session_id)
    if after is None:
        return bounds.last_seq
    if after < 0 or after > bounds.last_seq:
        raise BadInput(f"after must be the seq of an event of the session: from 0 to "
                       f"{bounds.last_seq}, got {after}")
    if after < bounds.pruned_through:
        raise expired(session_id, after, bounds.pruned_through)
    return after


def expired(session_id: str, after: int, pruned_through: int) -> EventsExpired:
    return EventsExpired(
        f"the events of session {session_id} after {after} are no longer kept (only those "
        f"after {pruned_through} are): reload the session and subscribe without `after`")


def event_out(e: events.SessionEvent) -> SessionEvent:
    common = {"id": e.id, "seq": e.seq, "type": EventType(e.type),
              "session_id": e.session_id, "at": e.at}
    d = e.data
    match EventType(e.type):
        case EventType.COMPACTION_STARTED:
            return CompactionStarted(**common, trigger=CompactionTrigger(d["trigger"]))
        case EventType.COMPACTION_FINISHED:
            return CompactionFinished(**common, trigger=CompactionTrigger(d["trigger"]),
                                      summary_id=d["summary_id"],
                                      covered_count=d["covered_count"],
                                      tokens_before=d["tokens_before"],
                                      tokens_after=d["tokens_after"],
                                      token_delta=d["tokens_after"] - d["tokens_before"])
        case EventType.COMPACTION_FAILED:
            return CompactionFailed(**common, trigger=CompactionTrigger(d["trigger"]),
                                    reason=d["reason"], code=d["code"])
        case EventType.HEAD_MOVED:
            return HeadMoved(**common, previous_head_id=d["previous_head_id"],
                             head_id=d["head_id"])
        case EventType.NODE_APPENDED:
            return NodeAppended(**common, node_id=d["node_id"], role=Role(d["role"]),
                                predecessor_id=d.get("predecessor_id"))
        case EventType.BRANCH_DELETED:
            return BranchDeleted(**common, tip_id=d["tip_id"], fork_point_id=d["fork_point_id"],
                                 deleted_ids=list(d["deleted_ids"]))
        case EventType.SUMMARY_RETIRED:
            return SummaryRetired(**common, summary_id=d["summary_id"],
                                  restored_summary_id=d.get("restored_summary_id"))
        case EventType.SUMMARY_STRATEGY_CHANGED:
            return SummaryStrategyChanged(**common, strategy=d["strategy"])
        case EventType.NODE_LABELED:
            return NodeLabeled(**common, node_id=d["node_id"], label=d["label"])
        case EventType.NODE_UNLABELED:
            return NodeUnlabeled(**common, node_id=d["node_id"])
        case EventType.BRANCH_NAMED:
            return BranchNamed(**common, tip_id=d["tip_id"], name=d["name"])
        case EventType.BRANCH_UNNAMED:
            return BranchUnnamed(**common, tip_id=d["tip_id"])
        case EventType.NODE_PINNED:
            return NodePinned(**common, node_id=d["node_id"])
        case EventType.NODE_UNPINNED:
            return NodeUnpinned(**common, node_id=d["node_id"])
        case EventType.BRANCH_CARRIED:
            return BranchCarried(**common, node_id=d["node_id"], from_id=d["from_id"],
                                 into_id=d["into_id"], carried_count=d["carried_count"])
        case EventType.NODE_REDACTED:
            return NodeRedacted(**common, node_id=d["node_id"], reason=d["reason"],
                                summary_ids=list(d.get("summary_ids") or []))
    raise TypeError(f"unknown event type {e.type!r}")
