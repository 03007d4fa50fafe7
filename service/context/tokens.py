"""Prompt token estimates behind one interface.

`HeuristicEstimator` (the default) adds up the estimate stored on every node;
`service.llm.anthropic_summarizer.AnthropicTokenCounter` asks the provider's
count_tokens endpoint when configured. Both are given the data of the media the nodes
name (by hash), which a provider's count reads as its request does.
"""
from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence

from ..store import Node


class TokenEstimator(Protocol):
    name: str

    async def count(self, nodes: Sequence[Node], media: Mapping[str, str],
                    tools: Sequence[Any] = ()) -> int:
        """The prompt's tokens (`media`: the data of the media it names), `tools`
        (service/turns/requests.Tool) offered with it."""
        ...


class HeuristicEstimator:
    name = "heuristic"

    async def count(self, nodes: Sequence[Node], media: Mapping[str, str],
                    tools: Sequence[Any] = ()) -> int:
        return sum(node.tokens for node in nodes)
