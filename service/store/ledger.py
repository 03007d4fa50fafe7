"""The ledger: the store layer's one entry point, bound to a tenant."""
from __future__ import annotations

from dataclasses import dataclass

from .branches import Branches
from .calls import Calls
from .carries import Carries
from .db import Database
from .drafts import Drafts
from .events import Events, OnCommit
from .head import HeadMoves
from .invariants import violations
from .branch_names import BranchNames
from .labels import Labels
from .nodes import Nodes
from .pins import Pins
from .redactions import Redactions
from .search import Search
from .sessions import Sessions
from .summaries import Summaries
from .tool_sets import ToolSets
from ..model.validate import Limits
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
    labels: Labels
    branch_names: BranchNames
    pins: Pins
    redactions: Redactions
    views: Views
    search: Search
    calls: Calls
    drafts: Drafts
    tool_sets: ToolSets
    carries: Carries
    events: Events

    @classmethod
    def open(cls, db: Database, tenant: str, limits: Limits,
             on_commit: OnCommit | None = None) -> "Ledger":
        """`on_commit`: told the events every write stores, once it committed (this
        process's event feed reads them then rather than at its next poll)."""
        events = Events(db, tenant, limits, on_commit)
        return cls(
            db=db,
            tenant=tenant,
            limits=limits,
            sessions=Sessions(db, tenant, limits, events),
            nodes=Nodes(db, tenant),
            head=HeadMoves(db, tenant, limits, events),
            branches=Branches(db, tenant),
            summaries=Summaries(db, tenant, limits, events),
            labels=Labels(db, tenant, events),
            branch_names=BranchNames(db, tenant, events),
            pins=Pins(db, tenant, events),
            redactions=Redactions(db, tenant, events),
            views=Views(db, tenant),
            search=Search(db, tenant),
            calls=Calls(db, tenant, limits),
            drafts=Drafts(db, tenant, limits),
            tool_sets=ToolSets(db, tenant),
            carries=Carries(db, tenant),
            events=events,
        )

    async def violations(self, session_id: str) -> list[str]:
        """Broken storage invariants of one session; empty when it is sound."""
        return await violations(self.db, self.tenant, session_id, self.limits)
