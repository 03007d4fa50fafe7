"""`search` in GraphQL: hits of the tenant's ledger (service/search), each with its state
in the model's context."""
from __future__ import annotations

from datetime import datetime
from typing import Optional

import strawberry
from strawberry.types import Info

from .. import search as found
from ..store.paging import Page
from .types import Message, Role, Session, message_out, page_info_out, PageInfo

SearchKind = strawberry.enum(found.Field, name="SearchKind", description=(
    "Where a hit matched: TEXT (a message's text, tool calls and results included, a "
    "summary, the system prompt), THINKING, TITLE (its session's), LABEL (its own)."))
ContextState = strawberry.enum(found.State, name="ContextState", description=(
    "Where a hit stands in what the model reads at the head: IN_CONTEXT (the render holds "
    "it), PINNED (covered, but rendered after its summary), SUMMARIZED (a summary the render "
    "shows stands in for it), NOT_RENDERED (a summary the render does not show, or a "
    "turn no render reads: outOfContext), "
    "OTHER_BRANCH (off the head's path), DELETED (removed with its branch)."))


@strawberry.type(description="A range of characters of a snippet: [start, end).")
class TextRange:
    start: int
    end: int


@strawberry.type(description="A hit's place in the model's context at a head.")
class HitContext:
    state: ContextState
    head_id: strawberry.ID = strawberry.field(description=(
        "The head the state is of: the session's HEAD unless `headId` was given."))
    summary_id: Optional[strawberry.ID] = strawberry.field(description=(
        "SUMMARIZED or PINNED: the summary standing in for it in the render; OTHER_BRANCH: "
        "the newest summary covering it on its own branch, if any."))
    summary_rendered: Optional[bool] = strawberry.field(description=(
        "Whether the head's render shows that summary."))


@strawberry.type(description="One hit of a search.")
class SearchHit:
    node: Message = strawberry.field(description=(
        "The node that matched (its session's ROOT when the session's title matched). "
        "`readBy` pages the calls that read it."))
    session_id: strawberry.ID
    session_title: Optional[str]
    score: float = strawberry.field(description="The index's relevance: higher is better.")
    matched_in: SearchKind
    snippet: str = strawberry.field(description=(
        "A window of the matched text around its first match (… where it is cut)."))
    highlights: list[TextRange] = strawberry.field(description="The matches in `snippet`.")
    context: HitContext

    @strawberry.field(description="The hit's session.")
    async def session(self, info: Info) -> Session:
        from .types import session_out

        return session_out(await info.context.loaders.sessions.load(str(self.session_id)))


@strawberry.type
class SearchHitEdge:
    cursor: str
    node: SearchHit


@strawberry.type(description="A page of hits, best first.")
class SearchHitConnection:
    edges: list[SearchHitEdge]
    nodes: list[SearchHit]
    page_info: PageInfo


def hit_out(hit: found.Hit) -> SearchHit:
    p = hit.placement
    return SearchHit(
        node=message_out(hit.node), session_id=hit.session_id, session_title=hit.session_title,
        score=hit.score, matched_in=hit.field, snippet=hit.snippet.text,
        highlights=[TextRange(start=a, end=b) for a, b in hit.snippet.highlights],
        context=HitContext(state=p.state, head_id=p.head_id, summary_id=p.summary_id,
                           summary_rendered=p.summary_rendered))


async def search_field(info: Info, query: str, session_id: Optional[str],
                       head_id: Optional[str], roles: Optional[list[Role]],
                       kinds: Optional[list[SearchKind]], since: Optional[datetime],
                       until: Optional[datetime], first: Optional[int],
                       after: Optional[str]) -> SearchHitConnection:
    ledger = info.context.services.ledger
    page = await found.search(ledger, query, found.Filters(
        session_id=session_id, head_id=head_id,
        roles=None if roles is None else tuple(roles),
        fields=None if kinds is None else tuple(kinds), since=since, until=until),
        first=first, after=after)
    hits = [hit_out(h) for h in page.hits]
    cursors = tuple(h.cursor for h in page.hits)
    return SearchHitConnection(
        edges=[SearchHitEdge(cursor=c, node=h) for c, h in zip(cursors, hits)], nodes=hits,
        page_info=page_info_out(Page(tuple(page.hits), cursors, page.has_next,
                                     page.has_previous)))
