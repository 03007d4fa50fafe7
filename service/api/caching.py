"""Prompt-cache accounting over GraphQL (docs/concepts/provenance.md): a call's shared prefix
and where it broke, and the totals of a session or a branch."""
from __future__ import annotations

import asyncio
from typing import Optional

import strawberry
from strawberry.types import Info

from ..store import calls

BreakCause = strawberry.enum(calls.BreakCause, description=(
    "Which write made a prompt differ from its previous call's where it does."))


@strawberry.type(description=(
    "Model calls' prompt-cache accounting, summed (a value a call lacks counts 0)."))
class CacheUsage:
    calls: int
    prompt_tokens: int = strawberry.field(description=(
        "The prompts' tokens as the ledger counts them (reads' stored tokens and tools')."))
    input_tokens: int = strawberry.field(description="As the providers reported them.")
    output_tokens: int
    cache_creation_input_tokens: int = strawberry.field(description=(
        "Tokens the provider wrote to its cache, as reported (Anthropic)."))
    cache_read_input_tokens: int = strawberry.field(description=(
        "Tokens the provider read from its cache, as reported (Anthropic; OpenAI's "
        "cached_tokens)."))
    shared_prefix_tokens: int = strawberry.field(description=(
        "Prompt tokens shared with each call's previous call: what a provider could have "
        "served from its cache, whatever the provider."))

    @strawberry.field(description="sharedPrefixTokens / promptTokens; null with no prompt.")
    def shared_prefix_share(self) -> Optional[float]:
        return self.shared_prefix_tokens / self.prompt_tokens if self.prompt_tokens else None


def cache_usage_out(totals: calls.CacheTotals) -> CacheUsage:
    return CacheUsage(**vars(totals))


@strawberry.type(description=(
    "Where a call's prompt stopped sharing its previous call's, and which write broke it."))
class CacheBreak:
    position: int = strawberry.field(description=(
        "The first read position whose node differs (or where one prompt ends)."))
    node_id: Optional[strawberry.ID] = strawberry.field(description=(
        "The call's node there; null when its prompt ends there."))
    previous_node_id: Optional[strawberry.ID] = strawberry.field(description=(
        "The previous call's node there; null when its prompt ended there."))
    cause: BreakCause


async def cache_break_of(info: Info, call_id: str) -> Optional[CacheBreak]:
    loaders = info.context.loaders
    call = await loaders.calls.load(call_id)
    if call.previous_call_id is None:
        return None
    previous = await loaders.calls.load(call.previous_call_id)
    at = call.shared_prefix_reads or 0
    ids = [*(call.read_ids or ())[at:at + 1], *(previous.read_ids or ())[at:at + 1]]
    # Both loaded together: the calls' breaks cost one statement each, however many calls.
    found_nodes, covering = await asyncio.gather(loaders.nodes.load_many(ids),
                                                 loaders.covering.load_many(ids))
    found = calls.cache_break(previous, call, {n.id: n for n in found_nodes},
                              dict(zip(ids, covering)))
    if found is None:
        return None
    return CacheBreak(position=found.position, node_id=found.node_id,
                      previous_node_id=found.previous_node_id, cause=found.cause)
