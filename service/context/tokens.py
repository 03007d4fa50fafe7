"""Prompt token estimates behind one interface.

`HeuristicEstimator` (the default) adds up the estimate stored on every node;
`service.llm.anthropic_summarizer.AnthropicTokenCounter` asks the provider's
count_tokens endpoint when configured.
"""
from __future__ import annotations

from typing import Protocol, Sequence

from ..store import Node


class TokenEstimator(Protocol):
    name: str

    async def count(self, nodes: Sequence[Node]) -> int: ...


class HeuristicEstimator:
    name = "heuristic"

    async def count(self, nodes: Sequence[Node]) -> int:
        return sum(node.tokens for node in nodes)
