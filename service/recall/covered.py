"""history_search: full-text search (service/search) limited to the covered history of a
head: the turns of its path that its render does not show verbatim because a summary it
shows stands in for them (placement SUMMARIZED)."""
from __future__ import annotations

from dataclasses import dataclass

from ..model import validate
from ..model.kinds import Role
from ..search import Filters, State, search
from ..search.snippet import Snippet
from ..store import Ledger
from ..store.paging import MAX_PAGE

DEFAULT_HITS = 10
MAX_HITS = 50


@dataclass(frozen=True)
class CoveredHit:
    node_id: str
    role: Role
    snippet: Snippet
    summary_id: str  # the summary the render shows in its place (history_expand's argument)


async def search_covered(ledger: Ledger, session_id: str, query: str, head_id: str | None = None,
                         first: int | None = None) -> list[CoveredHit]:
    """The best `first` covered hits of `query`, best first. Hits in context, pinned, on
    other branches or deleted are passed over; the scan ends where search's does."""
    wanted = DEFAULT_HITS if first is None else validate.page_size(first, MAX_HITS)
    filters = Filters(session_id=session_id, head_id=head_id)
    found: list[CoveredHit] = []
    after = None
    while len(found) < wanted:
        page = await search(ledger, query, filters, first=MAX_PAGE, after=after)
        found += [CoveredHit(h.node.id, h.node.role, h.snippet, h.placement.summary_id)
                  for h in page.hits
                  if h.placement.state is State.SUMMARIZED and h.placement.summary_id]
        if not page.has_next or not page.hits:
            break
        after = page.hits[-1].cursor
    return found[:wanted]
