"""The Anthropic-backed `Summarizer` and `TokenEstimator` (used when ANTHROPIC_API_KEY is set)."""
from __future__ import annotations

from dataclasses import replace
from typing import AbstractSet, Any, Mapping, Sequence

import anthropic

from ..config import DEFAULT_CACHE_TTL
from ..context.summarizers import Conversation, SummaryText
from ..errors import ModelError
from ..model.models import Node
from ..turns.requests import Options, Tool, ToolChoice, anthropic_messages, open_tool_uses
from .anthropic import AnthropicSettings, complete, count_tokens
from .prompts import (branch_summary_instruction, merge_prompt, summary_instruction,
                      summary_prompt)


class AnthropicSummarizer:
    """Asks `settings.summary_model` for a summary of the turns, absorbing the previous one,
    under the headings of prompts.SUMMARY_SYSTEM and following any focus instructions.

    (`summary_model` is already the chat model when none is configured: service/config.py.)

    Given the `conversation` a compaction cuts, it sends the conversation's own request
    (its tools, system prompt, messages and breakpoints) with the instruction appended
    last (prompts.summary_instruction), so the whole prompt but the instruction is read
    from the conversation's cache; without one, a prompt of its own (prompts.summary_prompt).
    (A cache is the model's own: a summary_model other than the chat model reads none.)
    A branch summary (`summarize_branch`) always sends the branch's own request: there is
    no text path for it.

    An empty reply, or one cut off at `max_tokens`, is a `ModelError`: a partial
    summary would silently lose what it was meant to stand in for.
    """

    name = "anthropic"
    reads_conversation = True

    def __init__(self, client: anthropic.AsyncAnthropic, settings: AnthropicSettings, *,
                 cache_ttl: str = DEFAULT_CACHE_TTL) -> None:
        self.client = client
        self.settings = settings
        self.cache_ttl = cache_ttl

    async def summarize(self, turns: Sequence[Node], previous_summary: str | None, *,
                        instructions: str | None = None,
                        verbatim: AbstractSet[str] = frozenset(),
                        conversation: Conversation | None = None) -> SummaryText:
        model = self.settings.summary_model
        if conversation is None:
            system, messages = summary_prompt(turns, previous_summary, instructions, verbatim)
            body: dict[str, Any] = {"model": model, "system": system, "messages": messages,
                                    "max_tokens": self.settings.max_tokens}
        else:
            body = self._request(conversation, previous_summary is not None, instructions,
                                 verbatim)
        return await self._ask(body)

    async def merge(self, summaries: Sequence[Node]) -> SummaryText:
        system, messages = merge_prompt(summaries)
        return await self._ask({"model": self.settings.summary_model, "system": system,
                                "messages": messages, "max_tokens": self.settings.max_tokens})

    async def summarize_branch(self, turns: Sequence[Node], *,
                               instructions: str | None = None,
                               conversation: Conversation | None = None) -> SummaryText:
        """The branch's own request (its tip's conversation, with the tools in force there),
        the branch-summary instruction appended last (prompts.branch_summary_instruction);
        tool calls the branch leaves unanswered go as text (requests.anthropic_messages)."""
        if conversation is None:
            raise ValueError("the Anthropic summarizer sends the branch's own request: "
                             "summarize_branch needs its conversation")
        appended = branch_summary_instruction(conversation.covered_from, instructions,
                                              len(open_tool_uses(conversation.nodes)))
        return await self._ask(self._sent(conversation, appended))

    async def _ask(self, body: dict[str, Any]) -> SummaryText:
        model = body["model"]
        reply = await complete(self.client, **body)
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
        return SummaryText(text, self.name, reply.model, reply.input_tokens, reply.output_tokens,
                           reply.cache_creation_input_tokens, reply.cache_read_input_tokens)

    def _request(self, conversation: Conversation, summarized_before: bool,
                 instructions: str | None, verbatim: AbstractSet[str]) -> dict[str, Any]:
        return self._sent(conversation, summary_instruction(
            summarized_before, conversation.retained, instructions,
            pinned=[n for n in conversation.nodes if n.id in verbatim],
            covered_from=conversation.covered_from))

    def _sent(self, conversation: Conversation, appended: str) -> dict[str, Any]:
        """The conversation's own request (its tools, system prompt, messages and
        breakpoints) for the summary model, `appended` last."""
        options = conversation.options or Options()
        choice = options.tool_choice
        if choice is not None and choice.mode in ("any", "tool"):
            choice = ToolChoice("none")  # a forced tool call could never be a summary
        options = replace(options, model=self.settings.summary_model,
                          max_tokens=self.settings.max_tokens, tool_choice=choice,
                          cache_ttl=self.cache_ttl)
        return anthropic_messages(conversation.nodes, conversation.media, options,
                                  appended=appended)


class AnthropicTokenCounter:
    """Prompt tokens as the provider counts them: count_tokens on the chat's request (its
    media and the tools offered with it included), without its breakpoints."""

    name = "anthropic"

    def __init__(self, client: anthropic.AsyncAnthropic, settings: AnthropicSettings) -> None:
        self.client = client
        self.settings = settings

    @property
    def model(self) -> str:
        return self.settings.model

    async def count(self, nodes: Sequence[Node], media: Mapping[str, str],
                    tools: Sequence[Tool] = ()) -> int:
        body = anthropic_messages(nodes, media, Options(model=self.settings.model,
                                                        tools=tuple(tools)),
                                  allow_open=True, cache=False)
        return await count_tokens(self.client, **body)
