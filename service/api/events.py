"""Session events as GraphQL types: an interface with one type per kind."""
import enum
from datetime import datetime
from typing import Optional

import strawberry

from .. import events
from .types import Role


@strawberry.enum
class EventType(enum.Enum):
    COMPACTION_STARTED = "compaction_started"
    COMPACTION_FINISHED = "compaction_finished"
    COMPACTION_FAILED = "compaction_failed"
    HEAD_MOVED = "head_moved"
    NODE_APPENDED = "node_appended"
    SUMMARY_RETIRED = "summary_retired"
    SUMMARY_STRATEGY_CHANGED = "summary_strategy_changed"


@strawberry.enum(description="What started a compaction.")
class CompactionTrigger(enum.Enum):
    MANUAL = "manual"
    AUTO = "auto"
    PASSIVE = "passive"


@strawberry.interface(description="Something that happened to a session.")
class SessionEvent:
    id: strawberry.ID = strawberry.field(description="Unique to this event.")
    type: EventType
    session_id: strawberry.ID
    at: datetime = strawberry.field(description="When it was published.")


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


@strawberry.type(description="A compaction was undone: the summary applies nowhere now.")
class SummaryRetired(SessionEvent):
    summary_id: strawberry.ID
    restored_summary_id: Optional[strawberry.ID] = strawberry.field(
        description="The session's active summary now.")


@strawberry.type(description="The session's summary strategy changed (so may its renders).")
class SummaryStrategyChanged(SessionEvent):
    strategy: str


EVENT_TYPES = (CompactionStarted, CompactionFinished, CompactionFailed, HeadMoved, NodeAppended,
               SummaryRetired, SummaryStrategyChanged)


def event_out(e: events.SessionEvent) -> SessionEvent:
    common = {"id": e.id, "type": EventType(e.type), "session_id": e.session_id, "at": e.at}
    match e:
        case events.CompactionStarted():
            return CompactionStarted(**common, trigger=CompactionTrigger(e.trigger))
        case events.CompactionFinished():
            return CompactionFinished(**common, trigger=CompactionTrigger(e.trigger),
                                      summary_id=e.summary_id, covered_count=e.covered_count,
                                      tokens_before=e.tokens_before,
                                      tokens_after=e.tokens_after, token_delta=e.token_delta)
        case events.CompactionFailed():
            return CompactionFailed(**common, trigger=CompactionTrigger(e.trigger),
                                    reason=e.reason, code=e.code)
        case events.HeadMoved():
            return HeadMoved(**common, previous_head_id=e.previous_head_id, head_id=e.head_id)
        case events.NodeAppended():
            return NodeAppended(**common, node_id=e.node_id, role=Role(e.role),
                                predecessor_id=e.predecessor_id)
        case events.SummaryRetired():
            return SummaryRetired(**common, summary_id=e.summary_id,
                                  restored_summary_id=e.restored_summary_id)
        case events.SummaryStrategyChanged():
            return SummaryStrategyChanged(**common, strategy=e.strategy)
    raise TypeError(f"unknown event {e!r}")
