"""beginTurn and completeTurn: a turn whose model the runtime calls itself (thin: the rules
are service/turns/service.py's; docs/guides/agent-runtimes.md, "Bring your own model")."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from enum import Enum
from typing import Optional

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from ..errors import ContextOverflow, ModelError, ModelUnavailable
from ..turns import requests
from ..turns.drafts import Draft
from .blocks import RequestFormat, request_of
from .types import Compaction, Message, compaction_out, message_out


@strawberry.type(description=(
    "A turn between its two steps (beginTurn, completeTurn): the request to send your "
    "model and what it reads. Complete it before `expiresAt`."))
class TurnDraft:
    id: strawberry.ID
    session_id: strawberry.ID
    user_node: Optional[Message] = strawberry.field(description=(
        "What beginTurn wrote: the message or the tool results (HEAD moved onto it). Null "
        "when it wrote nothing and the draft answers HEAD as it stood."))
    head_id: strawberry.ID = strawberry.field(description=(
        "The tip: the request's last message. completeTurn writes the reply after it, and "
        "moves HEAD onto the reply only when HEAD is still here."))
    read_ids: list[strawberry.ID] = strawberry.field(description=(
        "What the call will have read, in prompt order: completeTurn writes a READ edge to "
        "each (ROOT and summary stand-ins included; turns quoted by recall results last)."))
    tools_sha256: Optional[str] = strawberry.field(description=(
        "The tools the request offers, by content hash (null: none): the call's tools."))
    fingerprint: str = strawberry.field(description=(
        "One hash of what the request holds (its reads in order, its tools and tool "
        "choice): two drafts with one fingerprint send the same prompt."))
    expires_at: datetime = strawberry.field(description=(
        "After this, completeTurn is NOT_FOUND and the draft is forgotten (nothing of it "
        "stays; the message beginTurn wrote does)."))
    compaction: Optional[Compaction] = strawberry.field(description=(
        "The automatic compaction beginTurn ran first, when the prompt reached the budget."))
    draft: strawberry.Private[Draft]

    @strawberry.field(description=(
        "Exactly the body to send your provider (Anthropic's `POST /v1/messages`, OpenAI's "
        "`POST /v1/chat/completions`), with the draft's tools and tool choice and the given "
        "model and maxTokens: what the service's own providers would send for this turn."))
    async def request(self, info: Info, format: RequestFormat, model: Optional[str] = None,
                      max_tokens: Optional[int] = None) -> JSON:
        asked = requests.options(model=model, max_tokens=max_tokens)
        options = replace(self.draft.options, model=asked.model, max_tokens=asked.max_tokens)
        return await request_of(info, self.draft.view, format, options)


def draft_out(d: Draft) -> TurnDraft:
    return TurnDraft(id=d.id, session_id=d.session_id,
                     user_node=None if d.opened is None else message_out(d.opened),
                     head_id=d.head_id, read_ids=list(d.reads.ids),
                     tools_sha256=d.tools_sha256,
                     fingerprint=d.fingerprint, expires_at=d.stored.expires_at,
                     compaction=None if d.compaction is None else compaction_out(d.compaction),
                     draft=d)


@strawberry.input(description="What the provider reported the call cost, in tokens.")
class UsageInput:
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    cache_creation_input_tokens: Optional[int] = None
    cache_read_input_tokens: Optional[int] = None


def usage_in(usage: Optional[UsageInput]) -> Optional[dict[str, int]]:
    if usage is None:
        return None
    given = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
             "cache_creation_input_tokens": usage.cache_creation_input_tokens,
             "cache_read_input_tokens": usage.cache_read_input_tokens}
    return {k: v for k, v in given.items() if v is not None}


@strawberry.enum(description="How a model call failed (the codes the service's own failed "
                             "calls carry).")
class ModelErrorCode(Enum):
    MODEL_ERROR = "MODEL_ERROR"
    MODEL_UNAVAILABLE = "MODEL_UNAVAILABLE"
    CONTEXT_OVERFLOW = "CONTEXT_OVERFLOW"


_ERRORS = {ModelErrorCode.MODEL_ERROR: ModelError,
           ModelErrorCode.MODEL_UNAVAILABLE: ModelUnavailable,
           ModelErrorCode.CONTEXT_OVERFLOW: ContextOverflow}


@strawberry.input(description="A model call that failed: its code and the provider's message.")
class ModelFailureInput:
    message: str
    code: ModelErrorCode = ModelErrorCode.MODEL_ERROR


def failure_in(error: Optional[ModelFailureInput]) -> Optional[ModelError]:
    return None if error is None else _ERRORS[error.code](error.message)
