"""The four tools as functions of a tenant's ledger, each returning plain JSON.

Arguments are checked here (or by the operations they call) before anything is read, and
a bad one is a ctxdag error with its code, like everywhere else.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..context.render import render_context
from ..errors import BadInput
from ..model import validate
from ..model.blocks import to_json
from ..model.kinds import Role
from ..recall import DEFAULT_BUDGET_TOKENS, expand
from ..search import Filters, search
from ..search.records import hit_record
from ..store import Ledger, Node
from ..turns.replay import replay


async def search_hits(ledger: Ledger, query: str, session_id: str | None = None,
                      head_id: str | None = None, roles: Sequence[str] | None = None,
                      first: int | None = None, after: str | None = None) -> dict[str, Any]:
    page = await search(ledger, query, Filters(session_id=session_id, head_id=head_id,
                                               roles=_roles(roles)), first=first, after=after)
    return {"hits": [hit_record(h) for h in page.hits], "has_next": page.has_next,
            "next_cursor": page.hits[-1].cursor if page.has_next else None}


async def rendered_nodes(ledger: Ledger, session_id: str,
                         head_id: str | None = None) -> dict[str, Any]:
    view = await render_context(ledger, session_id, head_id)
    labels = await ledger.labels.get_many([n.id for n in view.nodes])
    return {"session_id": session_id, "head_id": view.head_id, "strategy": view.strategy,
            "tokens": view.tokens, "summary_ids": list(view.stand_in_ids),
            "nodes": [{**node_record(n), **({"label": labels[n.id]} if n.id in labels else {})}
                      for n in view.nodes]}


async def traced_call(ledger: Ledger, call_id: str) -> dict[str, Any]:
    validate.identifier(call_id, "call_id")
    replayed = await replay(ledger, call_id)
    call = replayed.call
    return {
        "call": {"id": call.id, "session_id": call.session_id, "purpose": call.purpose.value,
                 "provider": call.provider, "model": call.model, "head_id": call.head_id,
                 "started_at": call.started_at.isoformat(),
                 "input_tokens": call.input_tokens, "output_tokens": call.output_tokens,
                 "output_id": call.output_id, "error": call.error},
        "read": [{**node_record(n), "deleted": n.deleted} for n in replayed.nodes],
        # Whether today's render of the call's head is still this prompt (None: the
        # prompt was not a render of a live head, so there is nothing to compare).
        "today_differs": replayed.differs,
        "today_added": list(replayed.added), "today_dropped": list(replayed.dropped)}


async def expanded_summary(ledger: Ledger, summary_id: str, cursor: str | None = None,
                           head_id: str | None = None,
                           budget_tokens: int | None = None) -> dict[str, Any]:
    validate.identifier(summary_id, "summary_id")
    session_id = (await ledger.summaries.get(summary_id)).node.session_id
    page = await expand(ledger, session_id, summary_id, head_id,
                        DEFAULT_BUDGET_TOKENS if budget_tokens is None else budget_tokens,
                        cursor)
    return {"summary_id": page.summary_id, "session_id": session_id, "start": page.start,
            "total": page.total, "turns": [node_record(n) for n in page.turns],
            "next_cursor": page.next_cursor}


def node_record(node: Node) -> dict[str, Any]:
    """A node as the model reads it: its text, and its blocks when it has more than text."""
    record = {"id": node.id, "role": node.role.value, "text": node.content,
              "tokens": node.tokens}
    if node.blocks_json is not None:
        record["blocks"] = to_json(node.blocks)
    return record


def _roles(roles: Sequence[str] | None) -> tuple[Role, ...] | None:
    if roles is None:
        return None
    try:
        return tuple(Role(r) for r in roles)
    except ValueError:
        raise BadInput(f"roles are among {', '.join(r.value for r in Role)}") from None
