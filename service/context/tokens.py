"""Prompt token estimates behind one interface.

`HeuristicEstimator` (the default) adds up the estimate stored on every node;
`service.llm.anthropic_summarizer.AnthropicTokenCounter` asks the provider's
count_tokens endpoint when configured.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

from ..store import Node


class TokenEstimator(Protocol):
    name: str

    async def count(self, nodes: Sequence[Node], tools: Sequence[Any] = ()) -> int:
        """The prompt's tokens, `tools` (service/turns/requests.Tool) offered with it."""
        ...


class HeuristicEstimator:
    name = "heuristic"

    async def count(self, nodes: Sequence[Node], tools: Sequence[Any] = ()) -> int:
        return sum(node.tokens for node in nodes)
