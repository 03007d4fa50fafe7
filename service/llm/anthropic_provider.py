"""The Anthropic chat model behind the ModelProvider interface (service/turns/providers.py).

It sends the provider-neutral prompt shape of service/turns/messages.py; llm depends on
turns, never the reverse.
"""
from __future__ import annotations

from typing import Sequence

import anthropic

from ..store import Node
from ..turns.messages import to_messages
from ..turns.providers import ModelReply
from .anthropic import AnthropicSettings, complete


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, client: anthropic.AsyncAnthropic, settings: AnthropicSettings) -> None:
        self._client = client
        self._settings = settings
        self.model = settings.model

    async def complete(self, nodes: Sequence[Node]) -> ModelReply:
        system, messages = to_messages(nodes)
        done = await complete(self._client, model=self.model, system=system, messages=messages,
                              max_tokens=self._settings.max_tokens)
        return ModelReply(done.text, done.model, done.input_tokens, done.output_tokens,
                          {"provider": self.name, "model": done.model,
                           "stop_reason": done.stop_reason, "request_id": done.request_id})
