"""Runs full-text search over the tenant's ledger (cypher/search_hits.cypher).

The Lucene queries come ready from service/search/query.py, which knows the indexes'
fields (cypher/migrations/010_search.cypher); this module only binds them to the tenant
and turns rows into hits.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from ..model.models import Node, node_from_row
from .db import Database

# The best matches of each index a search ranks, within the tenant: what bounds its cost
# whatever the ledger holds. Pages end there.
SCAN_LIMIT = 2000


@dataclass(frozen=True)
class StoredHit:
    node: Node  # a session's ROOT when the session's title matched
    session_id: str
    session_title: str | None
    score: float
    fields: tuple[str, ...]  # where it matched: 'text' (content or thinking), 'title', 'label'
    label: str | None


class Search:
    def __init__(self, db: Database, tenant: str) -> None:
        self._db, self._tenant = db, tenant

    async def hits(self, node_query: str | None, label_query: str | None, *,
                   session_id: str | None, roles: Sequence[str] | None,
                   since: datetime | None, until: datetime | None,
                   offset: int, limit: int) -> list[StoredHit]:
        """One page of hits, best first: one round trip."""
        rows = await self._db.read(
            "search_hits", tenant=self._tenant, node_query=node_query, label_query=label_query,
            scan=SCAN_LIMIT, session_id=session_id, roles=None if roles is None else list(roles),
            since=since, until=until, offset=offset, limit=limit)
        return [StoredHit(node_from_row(r["node"]), r["session_id"], r["session_title"],
                          r["score"], tuple(sorted(r["fields"])), r["label"]) for r in rows]
