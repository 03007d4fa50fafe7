"""Search: hits of the tenant's ledger, each placed in the model's context.

One page costs three round trips whatever the ledger holds: the hits (the index bounds
them to the tenant), the renders of the heads they are placed at (one statement for every
session of the page), and the summaries holding them.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from ..errors import BadInput, CtxdagError
from ..model import validate
from ..model.blocks import thinking_of
from ..model.kinds import Role
from ..store import Ledger, Node, Rendered
from ..store.paging import DEFAULT_PAGE, MAX_PAGE
from ..store.search import SCAN_LIMIT, StoredHit
from . import query as q
from .placement import Placement, place
from .snippet import Snippet, snippet

_CURSOR_PREFIX = "hit:"


@dataclass(frozen=True)
class Hit:
    node: Node
    session_id: str
    session_title: str | None
    score: float
    field: q.Field  # where the snippet comes from (the first field it matched in)
    snippet: Snippet
    placement: Placement
    cursor: str


@dataclass(frozen=True)
class HitPage:
    hits: tuple[Hit, ...]
    has_next: bool
    has_previous: bool


@dataclass(frozen=True)
class Filters:
    session_id: str | None = None
    head_id: str | None = None  # with session_id: place that session's hits at this head
    roles: tuple[Role, ...] | None = None
    fields: tuple[q.Field, ...] | None = None  # the `kinds` asked; None: every field
    since: datetime | None = None
    until: datetime | None = None


async def search(ledger: Ledger, text: str, filters: Filters = Filters(),
                 first: int | None = None, after: str | None = None) -> HitPage:
    parsed = q.parse(text)
    limit = DEFAULT_PAGE if first is None else validate.page_size(first, MAX_PAGE)
    offset = _offset(after)
    session_id = validate.optional_identifier(filters.session_id, "sessionId")
    head_id = validate.optional_identifier(filters.head_id, "headId")
    if head_id is not None and session_id is None:
        raise BadInput("headId places hits within one session: give its sessionId too")
    for bound, name in ((filters.since, "since"), (filters.until, "until")):
        if bound is not None:
            validate.timestamp(bound, name)
    fields = tuple(q.Field) if not filters.fields else tuple(dict.fromkeys(filters.fields))
    if session_id is not None:
        await ledger.views.render(session_id, head_id)  # NOT_FOUND before searching
    if offset + limit > SCAN_LIMIT:
        return HitPage((), False, offset > 0)
    stored = await ledger.search.hits(
        q.node_query(parsed, ledger.tenant, fields, session_id),
        q.label_query(parsed, ledger.tenant, fields, session_id),
        session_id=session_id,
        roles=None if filters.roles is None else [r.value for r in filters.roles],
        since=filters.since, until=filters.until, offset=offset, limit=limit + 1)
    page = stored[:limit]
    placements = await _placements(ledger, page, session_id, head_id)
    hits = tuple(_hit(h, parsed, fields, placements[i], offset + i + 1)
                 for i, h in enumerate(page))
    return HitPage(hits, len(stored) > limit, offset > 0)


async def _placements(ledger: Ledger, hits: Sequence[StoredHit], session_id: str | None,
                      head_id: str | None) -> list[Placement]:
    sessions = list(dict.fromkeys(h.session_id for h in hits))
    renders = await ledger.views.render_many(
        [(s, head_id if s == session_id else None) for s in sessions])
    rendered: dict[str, Rendered] = {}
    for sid, result in zip(sessions, renders):
        if isinstance(result, CtxdagError):
            raise result
        rendered[sid] = result
    covering = await ledger.summaries.covering_many([h.node.id for h in hits]) if hits else {}
    return [place(h.node, rendered[h.session_id], covering.get(h.node.id, [])) for h in hits]


def _hit(stored: StoredHit, parsed: q.Parsed, fields: Sequence[q.Field],
         placement: Placement, position: int) -> Hit:
    field, text = _matched_text(stored, parsed, fields)
    return Hit(stored.node, stored.session_id, stored.session_title, stored.score, field,
               snippet(text, parsed.wanted), placement, _cursor(position))


def _matched_text(stored: StoredHit, parsed: q.Parsed, fields: Sequence[q.Field]
                  ) -> tuple[q.Field, str]:
    """The first asked field whose text shows a wanted term (else the first that matched)."""
    texts = {
        q.Field.TEXT: stored.node.content if "text" in stored.fields else None,
        q.Field.THINKING: thinking_of(stored.node.blocks) if "text" in stored.fields else None,
        q.Field.TITLE: stored.session_title if "title" in stored.fields else None,
        q.Field.LABEL: stored.label if "label" in stored.fields else None,
    }
    candidates = [(f, texts[f]) for f in fields if texts.get(f)]
    for field, text in candidates:
        if snippet(text, parsed.wanted).highlights:
            return field, text
    return candidates[0] if candidates else (q.Field.TEXT, stored.node.content)


def _cursor(position: int) -> str:
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{position}".encode()).decode()


def _offset(after: str | None) -> int:
    """The hits before the page `after` starts it (the position its cursor names)."""
    if after is None:
        return 0
    try:
        decoded = base64.urlsafe_b64decode(after.encode("ascii")).decode("ascii")
        if not decoded.startswith(_CURSOR_PREFIX):
            raise ValueError
        position = int(decoded[len(_CURSOR_PREFIX):])
        if not 0 < position <= SCAN_LIMIT or str(position) != decoded[len(_CURSOR_PREFIX):]:
            raise ValueError
    except (ValueError, UnicodeError):
        raise BadInput("after is not a cursor of a search's hits") from None
    return position
