"""The Anthropic-backed `Summarizer` and `TokenEstimator` (used when ANTHROPIC_API_KEY is set)."""
from __future__ import annotations

from typing import AbstractSet, Sequence

import anthropic

from ..context.summarizers import SummaryText
from ..errors import ModelError
from ..store.models import Node
from ..turns.messages import to_messages
from .anthropic import AnthropicSettings, complete, count_tokens
from .prompts import branch_summary_prompt, summary_prompt


class AnthropicSummarizer:
    """Asks `settings.summary_model` for a summary of the turns, absorbing the previous one,
    under the headings of prompts.SUMMARY_SYSTEM and following any focus instructions.

    (`summary_model` is already the chat model when none is configured: service/config.py.)

    An empty reply, or one cut off at `max_tokens`, is a `ModelError`: a partial
    summary would silently lose what it was meant to stand in for.
    """

    name = "anthropic"

    def __init__(self, client: anthropic.AsyncAnthropic, settings: AnthropicSettings) -> None:
        self.client = client
        self.settings = settings

    async def summarize(self, turns: Sequence[Node], previous_summary: str | None, *,
                        instructions: str | None = None,
                        verbatim: AbstractSet[str] = frozenset()) -> SummaryText:
        return await self._ask(*summary_prompt(turns, previous_summary, instructions, verbatim))

    async def summarize_branch(self, turns: Sequence[Node], *,
                               instructions: str | None = None) -> SummaryText:
        return await self._ask(*branch_summary_prompt(turns, instructions))

    async def _ask(self, system: str, messages: list[dict]) -> SummaryText:
        model = self.settings.summary_model
        reply = await complete(self.client, model=model, system=system, messages=messages,
                               max_tokens=self.settings.max_tokens)
        text = reply.text.strip()
        if not text:
            raise ModelError(f"{model} returned an empty summary "
                             f"(stop_reason {reply.stop_reason})",
                             model=reply.model, request_id=reply.request_id,
                             stop_reason=reply.stop_reason)
        if reply.stop_reason == "max_tokens":
            raise ModelError(
                f"{model}'s summary was cut off at max_tokens={self.settings.max_tokens}; "
                f"raise CTXDAG_ANTHROPIC_MAX_TOKENS or compact fewer turns",
                model=reply.model, request_id=reply.request_id,
                stop_reason=reply.stop_reason, output_tokens=reply.output_tokens)
        return SummaryText(text, self.name, reply.model, reply.input_tokens, reply.output_tokens)


class AnthropicTokenCounter:
    """Prompt tokens as the provider counts them (count_tokens on `to_messages(nodes)`)."""

    name = "anthropic"

    def __init__(self, client: anthropic.AsyncAnthropic, settings: AnthropicSettings) -> None:
        self.client = client
        self.settings = settings

    async def count(self, nodes: Sequence[Node]) -> int:
        system, messages = to_messages(nodes)
        return await count_tokens(self.client, model=self.settings.model, system=system,
                                  messages=messages)
