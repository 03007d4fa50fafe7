"""render_context: the one place that decides what the model reads.

From a head (default: the session's HEAD) the model reads the PREDECESSOR chain
from ROOT to the head — with one rule (spec §3). Let S be the session's active
summary and L its covered segment. If every node of L lies on the head's chain,
L is dropped and S stands in its place (S's predecessor is where L starts), so a
compacted branch renders [ROOT, S, retained tail…]. Otherwise the chain renders
verbatim: a fork that lacks the whole segment never inherits a summary of turns
it does not have.

The decision uses stored data only — never where HEAD happens to be, never a
superseded summary — so the same head renders the same list at any time, after
any restart. It runs as one statement (cypher/render_context.cypher) whose cost
follows the retained tail, not the covered history.
"""
from __future__ import annotations

from typing import Sequence

from ..errors import CtxdagError
from ..store import Ledger, Rendered


async def render_context(ledger: Ledger, session_id: str, head: str | None = None) -> Rendered:
    return await ledger.views.render(session_id, head)


async def render_many(ledger: Ledger, requests: Sequence[tuple[str, str | None]]
                      ) -> list[Rendered | CtxdagError]:
    """Several (session, head) renders in one statement; a failed one comes back as its error."""
    return await ledger.views.render_many(requests)
