"""Model providers behind one interface: the rendered nodes in, a reply out.

`OfflineProvider` is the embedded default: deterministic, no network, and it says
so in every reply. `service.llm.anthropic_provider.AnthropicProvider` is used when
ANTHROPIC_API_KEY is set.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from ..store import Node, Role
from ..tokens import estimate_tokens


@dataclass(frozen=True)
class ModelReply:
    text: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # stored on the reply node


class ModelProvider(Protocol):
    name: str
    model: str

    async def complete(self, nodes: Sequence[Node]) -> ModelReply:
        """Answers the prompt made of `nodes` (a rendered list, ROOT first).

        Raises ContextOverflow when the prompt does not fit, ModelUnavailable or
        ModelError for other failures.
        """
        ...


_FIRST_SENTENCE = re.compile(r"^(.*?[.!?])(\s|$)")


class OfflineProvider:
    """A deterministic stand-in model: it restates the last user message and what it read."""

    name = "offline"
    model = "offline-echo"

    async def complete(self, nodes: Sequence[Node]) -> ModelReply:
        last_user = next((n for n in reversed(nodes) if n.role is Role.USER), None)
        said = " ".join(last_user.content.split()) if last_user else ""
        match = _FIRST_SENTENCE.match(said)
        said = (match.group(1) if match else said)[:200]
        summarized = any(n.role is Role.SUMMARY for n in nodes)
        text = (f"[offline model] I read {len(nodes)} messages"
                + (", one of them a summary of earlier turns" if summarized else "")
                + (f". You said: \u201c{said}\u201d" if said else ".")
                + " (No language model is configured; set ANTHROPIC_API_KEY for real replies.)")
        prompt = sum(n.tokens for n in nodes)
        return ModelReply(text, self.model, prompt, estimate_tokens(text),
                          {"provider": self.name, "model": self.model, "offline": True})
