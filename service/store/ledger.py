"""The ledger: the store layer's one entry point, bound to a tenant."""
from __future__ import annotations

from dataclasses import dataclass

from ..events import EventBus
from .branches import Branches
from .calls import Calls
from .db import Database
from .head import HeadMoves
from .invariants import violations
from .nodes import Nodes
from .sessions import Sessions
from .summaries import Summaries
from .validate import Limits
from .views import Views


@dataclass(frozen=True)
class Ledger:
    db: Database
    tenant: str
    limits: Limits
    sessions: Sessions
    nodes: Nodes
    head: HeadMoves
    branches: Branches
    summaries: Summaries
    views: Views
    calls: Calls

    @classmethod
    def open(cls, db: Database, tenant: str, limits: Limits,
             events: EventBus | None = None) -> "Ledger":
        """`events`: where committed appends, HEAD moves, uncompacts and strategy changes are
        announced (None: nowhere)."""
        return cls(
            db=db,
            tenant=tenant,
            limits=limits,
            sessions=Sessions(db, tenant, limits, events),
            nodes=Nodes(db, tenant),
            head=HeadMoves(db, tenant, limits, events),
            branches=Branches(db, tenant),
            summaries=Summaries(db, tenant, limits, events),
            views=Views(db, tenant),
            calls=Calls(db, tenant, limits),
        )

    async def violations(self, session_id: str) -> list[str]:
        """Broken storage invariants of one session; empty when it is sound."""
        return await violations(self.db, self.tenant, session_id, self.limits)
