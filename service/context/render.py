"""render_context: the one place that decides what the model reads.

From a head (default: the session's HEAD) the model reads the PREDECESSOR chain
from ROOT to the head — with one rule (spec §3). Let S be the session's active
summary and L its covered segment. If every node of L lies on the head's chain,
L is dropped and S stands in its place (S's predecessor is where L starts), so a
compacted branch renders [ROOT, S, retained tail…]. Otherwise the chain renders
verbatim: a fork that lacks the whole segment never inherits a summary of turns
it does not have.

Pins: a pinned turn (`pin`, the session's PINNED relationship) inside the segment of the
summary that applies is rendered right after S, in chain order, with the other half of
its tool pair (a tool message and the message whose tool uses it answers are never
separated) — [ROOT, S, pinned covered turns…, retained tail…] — so the calls reading it
record the pinned node itself. Pinned turns outside the segment render where they are.

The decision uses stored data only — never where HEAD happens to be, never a
superseded summary — so the same head renders the same list at any time, after
any restart. It runs as one statement (cypher/render_context.cypher) whose cost
follows the retained tail and the pins, not the covered history.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Sequence

from ..errors import CtxdagError
from ..store import Appended, Ledger, Rendered


async def render_context(ledger: Ledger, session_id: str, head: str | None = None) -> Rendered:
    return await ledger.views.render(session_id, head)


async def render_many(ledger: Ledger, requests: Sequence[tuple[str, str | None]]
                      ) -> list[Rendered | CtxdagError]:
    """Several (session, head) renders in one statement; a failed one comes back as its error."""
    return await ledger.views.render_many(requests)


# About 16 MB of text at four bytes a token: enough for the live tips of a few hundred
# busy conversations.
DEFAULT_MEMORY_TOKENS = 4_000_000


class RenderMemory:
    """Recent renders of conversation tips, so a turn's prompt extends the previous one.

    Nodes are immutable and the rule above reads only stored data, so appending node N
    after P changes nothing about P's chain: while the summaries that exist and the
    session's strategy and pins stay the same, render(N) is render(P) followed by N.
    Every write that changes those (a compaction, an uncompact, a strategy change, a
    delete that takes summaries, a pin or an unpin) moves the session's
    `summary_version`; a render reads the version before the summaries, and an append
    reports the version it saw under the session's lock. So a remembered render is
    extended only when the append itself proves it current. A moved head, another
    process's write or a restart leaves nothing to extend, and the turn renders in full.
    Per process; least recently used tips are forgotten first, beyond `capacity_tokens`
    (0 remembers nothing).
    """

    def __init__(self, capacity_tokens: int = DEFAULT_MEMORY_TOKENS) -> None:
        self.capacity_tokens = capacity_tokens
        # (tenant, session, head) -> the head's render and its tokens, least recent first
        self._tips: OrderedDict[tuple[str, str, str], tuple[Rendered, int]] = OrderedDict()
        self._tokens = 0
        self.extended = 0  # renders served by extension, for tests and the benchmarks

    def remember(self, tenant: str, session_id: str, rendered: Rendered) -> None:
        key = (tenant, session_id, rendered.head_id)
        held = self._tips.get(key)
        if held is not None and held[0] is rendered:
            self._tips.move_to_end(key)
            return
        self._store(key, rendered, rendered.tokens)

    def extend(self, tenant: str, session_id: str, appended: Appended) -> Rendered | None:
        """render(appended.node) from its predecessor's remembered render, if still current."""
        node = appended.node
        held = self._tips.get((tenant, session_id, node.predecessor_id or ""))
        if held is None or held[0].summary_version != appended.summary_version:
            return None
        before, tokens = held
        self._forget((tenant, session_id, before.head_id))
        rendered = replace(before, head_id=node.id, nodes=before.nodes + (node,))
        self._store((tenant, session_id, node.id), rendered, tokens + node.tokens)
        self.extended += 1
        return rendered

    def _store(self, key: tuple[str, str, str], rendered: Rendered, tokens: int) -> None:
        self._forget(key)
        if tokens > self.capacity_tokens:
            return
        self._tips[key] = (rendered, tokens)
        self._tokens += tokens
        while self._tokens > self.capacity_tokens:
            self._forget(next(iter(self._tips)))

    def _forget(self, key: tuple[str, str, str]) -> None:
        gone = self._tips.pop(key, None)
        if gone is not None:
            self._tokens -= gone[1]
