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


EVENT_TYPES = (CompactionStarted, CompactionFinished, CompactionFailed, HeadMoved, NodeAppended)


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
    raise TypeError(f"unknown event {e!r}")
