"""The model provider (Anthropic). Only `service.llm.anthropic` touches the SDK.

Names are re-exported lazily, so `import service.llm` (or its `prompts`) does not
import the SDK until something from it is used.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "AnthropicSettings": "anthropic",
    "Completion": "anthropic",
    "complete": "anthropic",
    "count_tokens": "anthropic",
    "make_client": "anthropic",
    "to_messages": "messages",
    "translate_anthropic_errors": "anthropic",
    "AnthropicSummarizer": "anthropic_summarizer",
    "AnthropicTokenCounter": "anthropic_summarizer",
    "summary_prompt": "prompts",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
