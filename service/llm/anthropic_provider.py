"""The Anthropic chat model behind the ModelProvider interface (service/turns/providers.py).

Its request is service/turns/requests.py's `anthropic_messages`, the very body a client
gets from `RenderedContext.request(format: ANTHROPIC_MESSAGES)`; llm depends on turns,
never the reverse.
"""
from __future__ import annotations

from dataclasses import replace

import anthropic

from ..config import DEFAULT_CACHE_TTL
from ..turns.providers import Listener, ModelReply, Prompt
from ..turns.requests import anthropic_messages
from .anthropic import AnthropicSettings, Completion, complete, stream


class AnthropicProvider:
    name = "anthropic"

    def __init__(self, client: anthropic.AsyncAnthropic, settings: AnthropicSettings, *,
                 cache_ttl: str = DEFAULT_CACHE_TTL) -> None:
        self._client = client
        self._settings = settings
        self._cache_ttl = cache_ttl
        self.model = settings.model

    async def complete(self, prompt: Prompt) -> ModelReply:
        return self._reply(await complete(self._client, **self._body(prompt)))

    async def stream(self, prompt: Prompt, listener: Listener) -> ModelReply:
        """The same request, streamed (the SDK's `messages.stream`): the same reply."""
        return self._reply(await stream(self._client, listener, **self._body(prompt)))

    def _body(self, prompt: Prompt) -> dict:
        options = replace(prompt.options, model=self.model, max_tokens=self._settings.max_tokens,
                          cache_ttl=self._cache_ttl)
        return anthropic_messages(prompt.nodes, prompt.media, options)

    def _reply(self, done: Completion) -> ModelReply:
        plain = all(b["type"] == "text" for b in done.blocks)
        return ModelReply(done.text, done.model, done.input_tokens, done.output_tokens,
                          {"provider": self.name, "model": done.model,
                           "stop_reason": done.stop_reason, "request_id": done.request_id},
                          blocks=None if plain else done.blocks, stop_reason=done.stop_reason,
                          cache_creation_input_tokens=done.cache_creation_input_tokens,
                          cache_read_input_tokens=done.cache_read_input_tokens)
