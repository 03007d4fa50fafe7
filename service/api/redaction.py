"""`redact`: erasing a node's content for good (docs/guides/redaction.md), with its own
permission (CTXDAG_REDACT_TOKENS)."""
from __future__ import annotations

import strawberry
from strawberry.types import Info

from ..errors import Forbidden
from ..model.redaction import MARKER
from .types import Message, message_out

DESCRIPTION = (
    "Erases a node's content FOR GOOD; it cannot be undone. Its text, thinking, tool inputs "
    f"and results, images and documents are replaced by the marker {MARKER!r} (a tool use "
    "keeps its id and name with an empty input, a tool result the id it answers), and a "
    "medium no other node carries is deleted (its hash and size stay in `redaction.media`). "
    "Its id, role, edges, the calls that read it and the summaries covering it stay: renders, "
    "replays, diffs and exports show the marker in its place, and search no longer finds its "
    "text. `reason` (non-blank, kept for the audit) must not quote the secret. The summaries "
    "and carry nodes that may quote it are named (`mayBeQuotedByIds`): redact or re-summarize "
    "them. Needs a token of CTXDAG_REDACT_TOKENS (FORBIDDEN otherwise); a node redacted "
    "already is a CONFLICT. Announced as node_redacted. Never moves HEAD.")


@strawberry.type(description="A node redacted.")
class Redacted:
    node: Message
    may_be_quoted_by_ids: list[strawberry.ID] = strawberry.field(description=(
        "The summaries and carry nodes whose text may quote what was erased, newest first."))
    erased_media: list[str] = strawberry.field(description=(
        "The hashes of the media deleted with it (no other node carried them)."))


async def redact(info: Info, node_id: str, reason: str) -> Redacted:
    context = info.context
    ledger = context.services.ledger  # UNAUTHENTICATED before FORBIDDEN
    if not context.may_redact:
        raise Forbidden("this token may not redact: redaction needs a token listed in "
                        "CTXDAG_REDACT_TOKENS")
    done = await ledger.redactions.redact(node_id, reason)
    return Redacted(node=message_out(done.node), may_be_quoted_by_ids=list(done.quoting_ids),
                    erased_media=list(done.erased_media))
