"""history_expand: the covered turns of a summary the head's render shows, verbatim, a page
at a time.

A page holds whole units in chain order, as many as fit `budget_tokens` (the nodes' stored
token estimates); a unit is one turn, or a tool pair — the assistant message holding tool
uses and the tool message answering them — which is never split across pages. A unit
larger than the budget alone still makes a page of its own, so paging always advances.
The cursor names the summary and where the next page starts; it is opaque to callers.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Sequence

from ..config import DEFAULT_RECALL_BUDGET
from ..errors import BadInput
from ..model import validate
from ..model.blocks import tool_use_ids
from ..model.kinds import Role
from ..store import Ledger, Node

DEFAULT_BUDGET_TOKENS = DEFAULT_RECALL_BUDGET  # CTXDAG_RECALL_BUDGET
_FETCH = 64  # covered nodes read per round trip while a page fills
_CURSOR_PREFIX = "expand:"


@dataclass(frozen=True)
class ExpandPage:
    summary_id: str
    turns: tuple[Node, ...]  # chain order
    start: int  # the position of turns[0] among the summary's covered turns
    total: int  # how many turns the summary covers
    next_cursor: str | None  # None on the last page


async def expand(ledger: Ledger, session_id: str, summary_id: str, head_id: str | None,
                 budget_tokens: int = DEFAULT_BUDGET_TOKENS,
                 cursor: str | None = None) -> ExpandPage:
    """One page of the turns `summary_id` covers, when the render of `head_id` (the
    session's HEAD when None) shows that summary; else BAD_INPUT naming the ones it shows."""
    validate.identifier(session_id, "session id")
    validate.identifier(summary_id, "summary_id")
    validate.optional_identifier(head_id, "head id")
    validate.count(budget_tokens, "budget_tokens", minimum=1)
    start = _start(cursor, summary_id)
    rendered = await ledger.views.render(session_id, head_id)
    if summary_id not in rendered.stand_in_ids:
        shown = ", ".join(rendered.stand_in_ids) or "none"
        raise BadInput(f"summary {summary_id} is not shown by the render of head "
                       f"{rendered.head_id}; the summaries it shows: {shown}")
    covered = (await ledger.summaries.get(summary_id)).covers_ids
    if start > len(covered):
        raise BadInput("cursor is past the end of the summary's covered turns")
    turns = await _page(ledger, covered, start, budget_tokens)
    end = start + len(turns)
    return ExpandPage(summary_id, tuple(turns), start, len(covered),
                      _cursor(summary_id, end) if end < len(covered) else None)


async def _page(ledger: Ledger, covered: Sequence[str], start: int,
                budget_tokens: int) -> list[Node]:
    taken: list[Node] = []
    pending: list[Node] = []  # fetched, not yet placed
    fetched = start
    tokens = 0
    while True:
        if len(pending) < 2 and fetched < len(covered):  # a unit is at most two nodes
            more = covered[fetched:fetched + _FETCH]
            pending += await ledger.nodes.get_many(list(more))
            fetched += len(more)
        if not pending:
            return taken
        unit = _unit(pending)
        cost = sum(n.tokens for n in unit)
        if taken and tokens + cost > budget_tokens:
            return taken
        taken += unit
        tokens += cost
        del pending[:len(unit)]


def _unit(pending: Sequence[Node]) -> list[Node]:
    """The next unit: a tool pair when the first node opens tool uses the next answers."""
    first = pending[0]
    if (first.role is Role.ASSISTANT and tool_use_ids(first.blocks) and len(pending) > 1
            and pending[1].role is Role.TOOL and pending[1].predecessor_id == first.id):
        return [first, pending[1]]
    return [first]


def _cursor(summary_id: str, position: int) -> str:
    text = f"{_CURSOR_PREFIX}{summary_id}:{position}"
    return base64.urlsafe_b64encode(text.encode()).decode()


def _start(cursor: str | None, summary_id: str) -> int:
    if cursor is None:
        return 0
    try:
        if not isinstance(cursor, str):
            raise ValueError
        decoded = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
        named, _, position = decoded.removeprefix(_CURSOR_PREFIX).rpartition(":")
        if not decoded.startswith(_CURSOR_PREFIX) or named != summary_id:
            raise ValueError
        if not position.isdigit() or str(int(position)) != position:
            raise ValueError
        return int(position)
    except (ValueError, UnicodeError):
        raise BadInput(f"cursor is not a cursor of summary {summary_id}'s turns") from None
