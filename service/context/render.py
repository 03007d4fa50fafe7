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

from dataclasses import dataclass

from ..store import Ledger, Node, Rendered


@dataclass(frozen=True)
class RenderedContext:
    head_id: str
    nodes: tuple[Node, ...]
    summary_id: str | None  # the summary standing in for its segment here, if any
    active_summary_id: str | None  # the session's active summary, rendered here or not

    @property
    def node_ids(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes)

    @property
    def tokens(self) -> int:
        """The stored (heuristic) estimate; see context/tokens.py for provider counts."""
        return sum(n.tokens for n in self.nodes)

    @property
    def history(self) -> tuple[Node, ...]:
        """Everything after ROOT: the active summary (if rendered) and the turns."""
        return self.nodes[1:]


async def render_context(ledger: Ledger, session_id: str, head: str | None = None) -> RenderedContext:
    rendered: Rendered = await ledger.views.render(session_id, head)
    return RenderedContext(rendered.head_id, rendered.nodes, rendered.summary_id,
                           rendered.active_summary_id)
