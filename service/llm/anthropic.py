"""The Anthropic Messages API: the only module that touches the `anthropic` SDK.

Everything the rest of ctxdag needs from the provider goes through here:

- `make_client` — one `anthropic.AsyncAnthropic` for the `AnthropicSettings` that
  service/config.py parsed (this package never reads the environment);
- `translate_anthropic_errors` — the single place SDK exceptions become ctxdag errors;
- `complete` / `stream` / `count_tokens` — the calls, each wrapped in the translator
  (`stream` is `complete` through the SDK's streaming API, telling a listener the reply
  as it comes; both return the same `Completion` for the same message).

The (system, messages) they send is built by service/turns/messages.py.

The SDK retries 408/409/429/5xx/529 and connection errors itself (`max_retries`,
honoring the server's `retry-after-ms` / `retry-after` headers); an error reaches the
translator only once its retries are spent.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import anthropic
import httpx

from ..config import AnthropicSettings
from ..errors import ContextOverflow, CtxdagError, ModelError, ModelUnavailable
from ..model.blocks import RedactedThinking, Text, Thinking, ToolUse
from ..turns.providers import BlockClosed, Listener, TextDelta, ThinkingDelta


# --------------------------------------------------------------------------- client


def make_client(settings: AnthropicSettings) -> anthropic.AsyncAnthropic:
    """An async client for `settings`. Close it with `await client.close()`.

    `base_url` is the API's root, without `/v1` (the SDK adds `/v1/messages`); a
    trailing `/v1` given by mistake is dropped rather than doubled.
    """
    base_url = settings.base_url
    if base_url is not None:
        base_url = base_url.rstrip("/")
        if base_url.endswith("/v1"):
            base_url = base_url[: -len("/v1")]
    return anthropic.AsyncAnthropic(
        api_key=settings.api_key,
        base_url=base_url,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
    )


# --------------------------------------------------------------------------- errors

_TOO_LONG = re.compile(
    r"prompt is too long|exceeds? (?:the )?context (?:limit|window)|context length", re.I)
_PROMPT_TOO_LONG = re.compile(r"prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)", re.I)
_INPUT_PLUS_MAX = re.compile(
    r"input length and `?max_tokens`? exceed context limit:\s*(\d+)\s*\+\s*(\d+)\s*>\s*(\d+)",
    re.I)


def overflow_numbers(message: str) -> dict[str, int]:
    """Token numbers in a provider's context-overflow message, when it states them."""
    if m := _PROMPT_TOO_LONG.search(message):
        return {"prompt_tokens": int(m[1]), "limit": int(m[2])}
    if m := _INPUT_PLUS_MAX.search(message):
        return {"prompt_tokens": int(m[1]), "max_tokens": int(m[2]), "limit": int(m[3])}
    return {}


def _retries_taken(holder: Any) -> int | None:
    """How many retries the SDK made before the failed attempt.

    Read from the SDK's own `x-stainless-retry-count` header on the failed attempt's
    request; `holder` is the error's response or the error itself.
    """
    try:
        return int(holder.request.headers.get("x-stainless-retry-count"))
    except (AttributeError, TypeError, ValueError, RuntimeError):
        return None


def _after(retries: int | None) -> str:
    if retries is None:
        return ""
    if retries == 0:
        return " with no retries"
    return f" after {retries} retr{'y' if retries == 1 else 'ies'}"


def _status_error(e: anthropic.APIStatusError) -> CtxdagError:
    status = e.status_code
    kind = e.type or "unknown_error"
    text = e.api_message or e.message
    retries = _retries_taken(e.response)
    details: dict[str, Any] = {"status": status, "provider_error": kind,
                               "request_id": e.request_id, "retries": retries}
    if e.error_code:
        details["error_code"] = e.error_code
    after = _after(retries)

    if status == 400 and _TOO_LONG.search(text or ""):
        return ContextOverflow(
            f"the prompt does not fit the model's context window "
            f"(Anthropic, HTTP 400 {kind}): {text}",
            provider_message=text, **overflow_numbers(text), **details)
    if status == 413:
        return ContextOverflow(
            f"the request is too large for Anthropic (HTTP 413 {kind}): {text}",
            provider_message=text, **details)
    if status in (401, 403):
        return ModelError(
            f"Anthropic refused the API key (HTTP {status} {kind}): {text}; "
            f"check ANTHROPIC_API_KEY", **details)
    if status == 529:
        return ModelUnavailable(f"Anthropic is overloaded (HTTP 529){after}: {text}", **details)
    if status == 429:
        return ModelUnavailable(f"Anthropic rate-limited the request (HTTP 429){after}: {text}",
                                **details)
    if status == 408:
        return ModelUnavailable(f"Anthropic timed out the request (HTTP 408){after}: {text}",
                                **details)
    if status >= 500:
        return ModelUnavailable(
            f"Anthropic had a server error (HTTP {status} {kind}){after}: {text}", **details)
    return ModelError(f"Anthropic refused the request (HTTP {status} {kind}): {text}", **details)


def _translate(e: BaseException) -> CtxdagError | None:
    """The ctxdag error for an SDK exception; None for anything that is not the SDK's."""
    if isinstance(e, anthropic.APIStatusError):
        return _status_error(e)
    if isinstance(e, anthropic.APITimeoutError):  # before APIConnectionError: a subclass
        retries = _retries_taken(e)
        return ModelUnavailable(f"Anthropic did not answer in time{_after(retries)}: {e.message}",
                                retries=retries)
    if isinstance(e, anthropic.APIConnectionError):
        retries = _retries_taken(e)
        cause = e.__cause__ or e.__context__
        reason = f"{e.message} ({type(cause).__name__}: {cause})" if cause else e.message
        url = getattr(getattr(e, "request", None), "url", None)
        where = ""
        if url is not None:
            where = f" at {url.scheme}://{url.host}" + (f":{url.port}" if url.port else "")
        return ModelUnavailable(f"could not reach Anthropic{where}{_after(retries)}: {reason}",
                                retries=retries)
    if isinstance(e, anthropic.APIResponseValidationError):
        return ModelError(f"Anthropic sent a response of an unexpected shape "
                          f"(HTTP {e.status_code}): {e.message}", status=e.status_code)
    if isinstance(e, anthropic.AnthropicError):
        return ModelError(f"the Anthropic client failed: {type(e).__name__}: {e}")
    return None


class translate_anthropic_errors:
    """The single place where SDK exceptions become ctxdag errors (`raise X from e`).

    Works as `with translate_anthropic_errors():` and `async with ...:`. ctxdag
    errors and exceptions that are not the SDK's pass through untouched.

    - 400 invalid_request_error saying the prompt is too long / exceeds the context
      limit, and 413 → `ContextOverflow` (provider message kept; token numbers parsed
      into `details` when the message states them);
    - 529, 429, 408, 5xx, timeouts, connection errors → `ModelUnavailable`;
    - 401/403 → `ModelError` saying the API key was refused;
    - any other API error → `ModelError` with status and message.
    """

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if exc is None or isinstance(exc, CtxdagError):
            return False
        translated = _translate(exc)
        if translated is None:
            return False
        raise translated from exc

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool:
        return self.__exit__(exc_type, exc, tb)


# --------------------------------------------------------------------------- calls


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    input_tokens: int
    output_tokens: int
    stop_reason: str | None
    request_id: str | None
    blocks: list[dict[str, Any]] = field(default_factory=list)  # the reply's content blocks
    cache_creation_input_tokens: int | None = None  # None: the API did not report it
    cache_read_input_tokens: int | None = None


# The reply blocks the ledger stores (service/model/blocks.py), by the SDK's block type;
# any other kind (a server tool's use or result) is named in the reply's metadata instead.
_KEPT = {
    "text": lambda b: {"type": "text", "text": b.text} if b.text else None,
    "thinking": lambda b: {"type": "thinking", "thinking": b.thinking, "signature": b.signature},
    "redacted_thinking": lambda b: {"type": "redacted_thinking", "data": b.data},
    "tool_use": lambda b: {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input},
}


# The same blocks as the ledger's own, told to a listener as each closes.
_CLOSED = {
    "text": lambda b: Text(b.text) if b.text else None,
    "thinking": lambda b: Thinking(b.thinking, b.signature),
    "redacted_thinking": lambda b: RedactedThinking(b.data),
    "tool_use": lambda b: ToolUse(b.id, b.name, b.input),
}


async def complete(client: anthropic.AsyncAnthropic, **body: Any) -> Completion:
    """One non-streaming Messages API call with `body` (service/turns/requests.py's
    `anthropic_messages`, or a prompt of our own); an empty `system` is left out."""
    if not body.get("system"):
        body.pop("system", None)
    async with translate_anthropic_errors():
        message = await client.messages.create(**body)
    return _completion(message, getattr(message, "_request_id", None))


async def stream(client: anthropic.AsyncAnthropic, listener: Listener,
                 **body: Any) -> Completion:
    """`complete` through the SDK's streaming API (`messages.stream`): `listener` hears
    each text and thinking delta and each kept block as it closes (a tool use with its
    whole input); the Completion is the SDK's accumulated final message, the same as
    `complete` returns for it. A stream that breaks off is ModelUnavailable."""
    if not body.get("system"):
        body.pop("system", None)
    async with translate_anthropic_errors():
        try:
            async with client.messages.stream(**body) as events:
                async for event in events:
                    _tell(listener, event)
                message = await events.get_final_message()
                request_id = events.request_id
        except httpx.TransportError as e:
            raise ModelUnavailable(f"the reply's stream from Anthropic broke off: "
                                   f"{type(e).__name__}: {e}") from e
    return _completion(message, request_id)


def _tell(listener: Listener, event: Any) -> None:
    if event.type == "content_block_delta":
        if event.delta.type == "text_delta":
            listener(TextDelta(event.index, event.delta.text))
        elif event.delta.type == "thinking_delta":
            listener(ThinkingDelta(event.index, event.delta.thinking))
    elif event.type == "content_block_stop":
        closed = _CLOSED.get(event.content_block.type)
        block = None if closed is None else closed(event.content_block)
        if block is not None:
            listener(BlockClosed(event.index, block))


def _completion(message: Any, request_id: str | None) -> Completion:
    kept = [_KEPT[block.type](block) for block in message.content if block.type in _KEPT]
    return Completion(
        text="".join(block.text for block in message.content if block.type == "text"),
        model=message.model,
        input_tokens=message.usage.input_tokens,
        output_tokens=message.usage.output_tokens,
        stop_reason=message.stop_reason,
        request_id=request_id,
        blocks=[b for b in kept if b is not None],
        cache_creation_input_tokens=getattr(message.usage, "cache_creation_input_tokens", None),
        cache_read_input_tokens=getattr(message.usage, "cache_read_input_tokens", None),
    )


async def count_tokens(client: anthropic.AsyncAnthropic, *, model: str,
                       messages: list[dict], system: Any = None,
                       tools: list[dict] | None = None, **rest: Any) -> int:
    """The provider's input-token count for a request body (POST /v1/messages/count_tokens):
    its model, system prompt, messages and tools (what count_tokens does not take of a
    body, such as max_tokens, is left out)."""
    async with translate_anthropic_errors():
        counted = await client.messages.count_tokens(
            model=model,
            messages=messages,  # type: ignore[arg-type]
            **({"system": system} if system else {}),
            **({"tools": tools} if tools else {}),
        )
    return counted.input_tokens
