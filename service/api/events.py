"""Session events as GraphQL types: an interface with one type per kind."""
import enum
from typing import Optional

import strawberry

from .. import events


@strawberry.enum
class EventType(enum.Enum):
    COMPACTION_STARTED = "compaction_started"
    COMPACTION_FINISHED = "compaction_finished"
    COMPACTION_FAILED = "compaction_failed"
    HEAD_MOVED = "head_moved"
    NODE_APPENDED = "node_appended"
    SUMMARY_RETIRED = "summary_retired"
    SUMMARY_STRATEGY_CHANGED = "summary_strategy_changed"


@strawberry.interface
class SessionEvent:
    type: EventType
    session_id: strawberry.ID


@strawberry.type
class CompactionStarted(SessionEvent):
    trigger: str


@strawberry.type
class CompactionFinished(SessionEvent):
    trigger: str
    summary_id: strawberry.ID
    covered_count: int
    tokens_before: int
    tokens_after: int
    token_delta: int


@strawberry.type
class CompactionFailed(SessionEvent):
    trigger: str
    reason: str
    code: str


@strawberry.type
class HeadMoved(SessionEvent):
    previous_head_id: strawberry.ID
    head_id: strawberry.ID


@strawberry.type
class NodeAppended(SessionEvent):
    node_id: strawberry.ID
    role: str
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
    kind = EventType(e.type)
    match e:
        case events.CompactionStarted():
            return CompactionStarted(type=kind, session_id=e.session_id, trigger=e.trigger)
        case events.CompactionFinished():
            return CompactionFinished(type=kind, session_id=e.session_id, trigger=e.trigger,
                                      summary_id=e.summary_id, covered_count=e.covered_count,
                                      tokens_before=e.tokens_before,
                                      tokens_after=e.tokens_after, token_delta=e.token_delta)
        case events.CompactionFailed():
            return CompactionFailed(type=kind, session_id=e.session_id, trigger=e.trigger,
                                    reason=e.reason, code=e.code)
        case events.HeadMoved():
            return HeadMoved(type=kind, session_id=e.session_id,
                             previous_head_id=e.previous_head_id, head_id=e.head_id)
        case events.NodeAppended():
            return NodeAppended(type=kind, session_id=e.session_id, node_id=e.node_id,
                                role=e.role, predecessor_id=e.predecessor_id)
        case events.SummaryRetired():
            return SummaryRetired(type=kind, session_id=e.session_id, summary_id=e.summary_id,
                                  restored_summary_id=e.restored_summary_id)
        case events.SummaryStrategyChanged():
            return SummaryStrategyChanged(type=kind, session_id=e.session_id,
                                          strategy=e.strategy)
    raise TypeError(f"unknown event {e!r}")
