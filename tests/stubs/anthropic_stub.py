"""A local HTTP stand-in for the Anthropic Messages API, for driving the real SDK in tests.

A real HTTP server (stdlib `ThreadingHTTPServer`, daemon thread, 127.0.0.1, a free
port) answering the two endpoints ctxdag uses:

- `POST /v1/messages` — scripted responses (`enqueue`) consumed in order, then
  `default(request_body)` (an echo of the last user message unless replaced);
- `POST /v1/messages/count_tokens` — scripted (`enqueue_count_tokens`), otherwise
  `{"input_tokens": N}` with N = the characters the request's blocks hold // 4, min 1
  (`counted_chars`: the system prompt, text and thinking, a tool call's name and input,
  a tool result's texts; tool definitions are not counted).

A request with `"stream": true` (the SDK's `messages.stream`) gets the same message as
server-sent events, the way the Messages API streams one: `message_start` (the message
with empty content, its usage's input and cache tokens), a `ping`, then per block
`content_block_start` (text "", thinking "" with signature "", tool_use with input {}),
its deltas (`text_delta` word by word, `thinking_delta` word by word then one
`signature_delta`, `input_json_delta` the input's JSON in pieces) and
`content_block_stop`, then `message_delta` (stop_reason, output_tokens) and
`message_stop`. A response's `pause` (a threading.Event) holds the stream after its
`pause_after`-th delta until it is set, so a test can act mid-reply. An error response
to a streamed request is the same JSON error, as the API answers before a stream opens.

Prompt caching follows the documented prefix rule (`PromptCache`): a successful message
reports `cache_read_input_tokens` (the longest prefix an earlier request wrote, ending
at one of its breakpoints), `cache_creation_input_tokens` (the rest up to this request's
last breakpoint, which it writes) and, when its input_tokens is the stub's own count,
only the tokens after the last breakpoint as input_tokens, as the API does.

Responses have the API's real shapes and headers (`request-id`; error bodies
`{"type": "error", "error": {"type": ..., "message": ...}}`). Error responses carry
`retry-after-ms` (10 by default), which the SDK honors, so its retries take
milliseconds. Every request is recorded (path, lowercased headers, parsed JSON body),
including the SDK's `x-stainless-retry-count` (unless `keep_requests=False`). Nothing is
logged.

With `api_key=` set, a request without that key gets the API's 401 (SDK 2.x sends
`authorization: Bearer <key>`; `x-api-key` is accepted too); otherwise any key passes.

    with AnthropicStub() as stub:
        stub.enqueue(overloaded(), reply("hello"))
        client = anthropic.AsyncAnthropic(api_key="test", base_url=stub.base_url)
"""
from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Mapping

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"


@dataclass(frozen=True)
class StubResponse:
    """One scripted answer. `body` may be a function of the request's JSON body."""

    status: int
    body: Mapping[str, Any] | Callable[[dict], Mapping[str, Any]]
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (to provoke client timeouts)
    pause: threading.Event | None = None  # a streamed reply waits for it mid-stream …
    pause_after: int = 1  # … after this many deltas


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lowercased
    body: Any  # the parsed JSON body (None if it was not JSON)

    @property
    def retry_count(self) -> int | None:
        """The SDK's `x-stainless-retry-count`: 0 on the first attempt."""
        value = self.headers.get("x-stainless-retry-count")
        return int(value) if value is not None else None


# --------------------------------------------------------------------------- helpers


def message_text(body: Mapping[str, Any]) -> list[str]:
    """Every text in a request: the system prompt, then each message's text blocks."""
    texts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        texts.append(system)
    elif isinstance(system, list):
        texts += [b.get("text", "") for b in system if isinstance(b, dict)]
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [b.get("text", "") for b in content if isinstance(b, dict)]
    return texts


def counted_chars(block: Any) -> int:
    """The characters of a content block the stub counts as input: a text's or thinking's
    text, a tool call's name and input (as JSON), a tool result's texts (a string content
    being its one text). Images and documents count nothing."""
    if isinstance(block, str):
        return len(block)
    if not isinstance(block, Mapping):
        return 0
    kind = block.get("type")
    if kind == "text":
        return len(block.get("text") or "")
    if kind == "thinking":
        return len(block.get("thinking") or "")
    if kind == "tool_use":
        return len(str(block.get("name") or "")) + len(json.dumps(block.get("input")))
    if kind == "tool_result":
        content = block.get("content")
        parts = [content] if isinstance(content, str) else content or []
        return sum(counted_chars(part) for part in parts)
    return 0


def estimate_input_tokens(body: Mapping[str, Any]) -> int:
    """The stub's deterministic token count: every block's `counted_chars` // 4, at least 1."""
    system = body.get("system")
    blocks: list[Any] = [system] if isinstance(system, str) else list(system or [])
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks += [content] if isinstance(content, str) else list(content or [])
    return max(1, sum(counted_chars(b) for b in blocks) // 4)


def reply(text: str, input_tokens: int | None = None, output_tokens: int | None = None, *,
          model: str | None = None, stop_reason: str = "end_turn",
          headers: Mapping[str, str] | None = None) -> StubResponse:
    """A successful message. Unset token counts and model are taken from the request."""

    def body(request: dict) -> dict:
        return {
            "id": f"msg_stub{next(_ids):08d}",
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}] if text else [],
            "model": model or request.get("model") or "claude-stub",
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                **({"_estimated": True} if input_tokens is None else {}),
                "input_tokens": (estimate_input_tokens(request)
                                 if input_tokens is None else input_tokens),
                "output_tokens": (max(1, len(text) // 4)
                                  if output_tokens is None else output_tokens),
            },
        }

    return StubResponse(200, body, dict(headers or {}))


def tool_call(*uses: tuple[str, str, dict], text: str | None = None,
              thinking: tuple[str, str] | None = None) -> StubResponse:
    """A message that stops to call tools: (id, name, input) each, after optional thinking
    (text, signature) and text, as the Messages API answers when it uses tools."""
    content: list[dict] = []
    if thinking is not None:
        content.append({"type": "thinking", "thinking": thinking[0], "signature": thinking[1]})
    if text:
        content.append({"type": "text", "text": text})
    content += [{"type": "tool_use", "id": i, "name": n, "input": args} for i, n, args in uses]

    def body(request: dict) -> dict:
        return {"id": f"msg_stub{next(_ids):08d}", "type": "message", "role": "assistant",
                "content": content, "model": request.get("model") or "claude-stub",
                "stop_reason": "tool_use", "stop_sequence": None,
                "usage": {"_estimated": True, "input_tokens": estimate_input_tokens(request),
                          "output_tokens": 20}}

    return StubResponse(200, body)


def paused(response: StubResponse, pause: threading.Event, after: int = 1) -> StubResponse:
    """`response`, streamed up to its `after`-th delta, then held until `pause` is set."""
    return StubResponse(response.status, response.body, response.headers, response.delay,
                        pause, after)


def sse_events(message: Mapping[str, Any]) -> list[tuple[str, dict]]:
    """A message as the Messages API streams it: (event name, data) in order."""
    usage = dict(message.get("usage") or {})
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start",
                                                         "message": start}),
                                      ("ping", {"type": "ping"})]
    for index, block in enumerate(message.get("content") or []):
        kind = block["type"]
        opened = {"text": {"type": "text", "text": ""},
                  "thinking": {"type": "thinking", "thinking": "", "signature": ""},
                  "tool_use": {**block, "input": {}}}.get(kind, block)
        events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                               "content_block": opened}))
        if kind == "text":
            deltas = [{"type": "text_delta", "text": w} for w in _words(block["text"])]
        elif kind == "thinking":
            deltas = [{"type": "thinking_delta", "thinking": w}
                      for w in _words(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif kind == "tool_use":
            text = json.dumps(block["input"])
            deltas = [{"type": "input_json_delta", "partial_json": text[i:i + 8]}
                      for i in range(0, len(text), 8)]
        else:
            deltas = []
        events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                            "delta": d}) for d in deltas]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": message.get("stop_reason"),
                  "stop_sequence": message.get("stop_sequence")},
        "usage": {"output_tokens": usage.get("output_tokens", 0)}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _words(text: str) -> list[str]:
    """`text` in pieces of one word each, with the whitespace before it (joined: `text`)."""
    pieces = re.findall(r"\s*\S+", text)
    rest = text[len("".join(pieces)):]
    return pieces + [rest] if rest or not pieces else pieces


def token_count(n: int) -> StubResponse:
    """A scripted count_tokens answer."""
    return StubResponse(200, {"input_tokens": n})


def error(status: int, type: str, message: str, *,
          headers: Mapping[str, str] | None = None) -> StubResponse:
    """An API error with the real body shape."""
    return StubResponse(status, {"type": "error", "error": {"type": type, "message": message}},
                        dict(headers or {}))


def overloaded() -> StubResponse:
    return error(529, "overloaded_error", "Overloaded")


def rate_limited() -> StubResponse:
    return error(429, "rate_limit_error",
                 "This request would exceed the rate limit for your organization.")


def prompt_too_long(tokens: int = 208656, limit: int = 200000) -> StubResponse:
    return error(400, "invalid_request_error",
                 f"prompt is too long: {tokens} tokens > {limit} maximum")


def unauthorized() -> StubResponse:
    return error(401, "authentication_error", "invalid x-api-key")


def echo(body: dict) -> StubResponse:
    """The default reply: "echo: " and the last user message's text."""
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    last = "\n\n".join(message_text({"messages": users[-1:]}))
    return reply(f"echo: {last}")


_ids = itertools.count(1)


class PromptCache:
    """Anthropic's prefix rule, per model: a request's prefix runs tools, system, messages,
    block by block (a message's string content is its one text block; `cache_control`
    marks are not content). Each breakpoint writes the prefix ending at it; a request
    reads the longest prefix written before that ends at or before its last breakpoint,
    and creates the rest up to that breakpoint. Tokens are the stub's: counted characters
    // 4 (estimate_input_tokens). No minimum length and no expiry."""

    def __init__(self) -> None:
        self.written: set[str] = set()

    def account(self, body: Mapping[str, Any]) -> tuple[int, int, int]:
        """(read, creation, after the last breakpoint) tokens, writing its breakpoints."""
        digest = hashlib.sha256(str(body.get("model")).encode()).hexdigest()
        hashes, chars, marks, total = [], [], [], 0
        for unit, marked in _units(body):
            total += 0 if "tool" in unit else counted_chars(unit)
            digest = hashlib.sha256((digest + json.dumps(unit, sort_keys=True)).encode()
                                    ).hexdigest()
            hashes.append(digest)
            chars.append(total)
            if marked:
                marks.append(len(hashes) - 1)
        if not marks:
            return 0, 0, total // 4
        last = marks[-1]
        read_end = max((i for i in range(last + 1) if hashes[i] in self.written), default=None)
        read = 0 if read_end is None else chars[read_end] // 4
        creation = chars[last] // 4 - read
        self.written.update(hashes[i] for i in marks)
        return read, creation, total // 4 - read - creation


def _units(body: Mapping[str, Any]) -> list[tuple[dict, bool]]:
    """The request's prefix, block by block, each without its mark, and whether marked."""
    def unmarked(block: Mapping[str, Any]) -> dict:
        return {k: v for k, v in block.items() if k != "cache_control"}

    units: list[tuple[dict, bool]] = []
    for tool in body.get("tools") or []:
        units.append(({"tool": unmarked(tool)}, "cache_control" in tool))
    system = body.get("system")
    for block in ([{"type": "text", "text": system}] if isinstance(system, str) and system
                  else system if isinstance(system, list) else []):
        units.append(({"system": True, **unmarked(block)}, "cache_control" in block))
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for i, block in enumerate(blocks or []):
            units.append(({"role": message.get("role"), "opens": i == 0, **unmarked(block)},
                          "cache_control" in block))
    return units


# --------------------------------------------------------------------------- server


class AnthropicStub:
    def __init__(self, *, default: Callable[[dict], StubResponse | str] = echo,
                 retry_after_ms: int | None = 10, api_key: str | None = None,
                 keep_requests: bool = True) -> None:
        """`default(body)` answers unscripted messages; `api_key`, when set, is required
        (as `authorization: Bearer …` or `x-api-key`), otherwise any key is accepted.
        `keep_requests=False` records no request (a long run would hold every body)."""
        self.default = default
        self.keep_requests = keep_requests
        self.api_key = api_key
        self.retry_after_ms = retry_after_ms
        self.requests: list[RecordedRequest] = []
        self.errors: list[BaseException] = []  # failures inside the stub itself
        self._queue: deque[StubResponse] = deque()
        self._count_queue: deque[StubResponse] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._request_ids = itertools.count(1)
        self.cache = PromptCache()

    # lifecycle

    def start(self) -> "AnthropicStub":
        if self._server is not None:
            return self
        stub = self

        class Handler(_Handler):
            owner = stub

        server = _QuietServer(("127.0.0.1", 0), Handler)
        server.stub = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="anthropic-stub",
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "AnthropicStub":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the stub is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # scripting

    def enqueue(self, *responses: StubResponse | str) -> None:
        """Answers for the next POST /v1/messages requests, in order (a str is `reply(str)`)."""
        with self._lock:
            self._queue.extend(reply(r) if isinstance(r, str) else r for r in responses)

    def enqueue_count_tokens(self, *responses: StubResponse | int) -> None:
        """Answers for the next POST /v1/messages/count_tokens requests (an int is a count)."""
        with self._lock:
            self._count_queue.extend(token_count(r) if isinstance(r, int) else r
                                     for r in responses)

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self._count_queue.clear()
            self.requests.clear()
            self.errors.clear()
            self.cache = PromptCache()

    def requests_to(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    @property
    def pending(self) -> int:
        """Scripted responses not yet consumed (both endpoints)."""
        with self._lock:
            return len(self._queue) + len(self._count_queue)

    # serving (called from the handler threads)

    def _answer(self, method: str, path: str, headers: dict[str, str],
                body: Any) -> StubResponse:
        if self.keep_requests:
            with self._lock:
                self.requests.append(RecordedRequest(method, path, headers, body))
        if method != "POST" or path not in (MESSAGES_PATH, COUNT_TOKENS_PATH):
            return error(404, "not_found_error", f"{method} {path} is not served by the stub")
        if self.api_key is not None and self.api_key not in (
                headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer ")):
            return unauthorized()
        if not isinstance(body, dict):
            return error(400, "invalid_request_error", "the request body is not a JSON object")
        with self._lock:
            queue = self._queue if path == MESSAGES_PATH else self._count_queue
            if queue:
                return queue.popleft()
        if path == COUNT_TOKENS_PATH:
            return token_count(estimate_input_tokens(body))
        answer = self.default(body)
        return reply(answer) if isinstance(answer, str) else answer

    def _render(self, response: StubResponse, body: Any
                ) -> tuple[int, dict[str, str], bytes | list[tuple[str, dict]]]:
        """The status, headers and body: JSON bytes, or a streamed message's events."""
        payload = response.body(body if isinstance(body, dict) else {}) \
            if callable(response.body) else response.body
        usage = payload.get("usage") if isinstance(payload, dict) else None
        if isinstance(usage, dict) and response.status == 200 and isinstance(body, dict) \
                and "messages" in body:
            usage = dict(usage)
            with self._lock:
                read, creation, uncached = self.cache.account(body)
            if usage.pop("_estimated", False):
                usage["input_tokens"] = uncached
            usage.update(cache_read_input_tokens=read, cache_creation_input_tokens=creation)
            payload = {**payload, "usage": usage}
        if response.status == 200 and isinstance(body, dict) and body.get("stream") is True \
                and isinstance(payload, dict) and payload.get("type") == "message":
            return 200, {"content-type": "text/event-stream", "cache-control": "no-cache",
                         "request-id": f"req_stub{next(self._request_ids):08d}",
                         **{k.lower(): v for k, v in response.headers.items()}
                         }, sse_events(payload)
        data = json.dumps(payload).encode()
        headers = {"content-type": "application/json",
                   "request-id": f"req_stub{next(self._request_ids):08d}"}
        if response.status >= 400 and self.retry_after_ms is not None:
            headers["retry-after-ms"] = str(self.retry_after_ms)
        headers.update({k.lower(): v for k, v in response.headers.items()})
        return response.status, headers, data


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stop() must not wait for idle keep-alive connections
    stub: AnthropicStub

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if exc is not None and not isinstance(exc, (ConnectionError, TimeoutError)):
            self.stub.errors.append(exc)


class _Handler(BaseHTTPRequestHandler):
    owner: AnthropicStub
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's connection pool expects
    server_version = "anthropic-stub"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        path = self.path.split("?", 1)[0]
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        stub = self.owner
        try:
            response = stub._answer(self.command, path, headers, body)
            status, out_headers, data = stub._render(response, body)
        except Exception as e:  # noqa: BLE001 - a broken script is reported, not hidden
            stub.errors.append(e)
            response = error(500, "api_error", f"the stub failed: {type(e).__name__}: {e}")
            status, out_headers, data = stub._render(response, body)
        if response.delay:
            time.sleep(response.delay)
        self.send_response(status)
        for name, value in out_headers.items():
            self.send_header(name, value)
        if isinstance(data, list):
            self._stream(data, response)
            return
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, events: list[tuple[str, dict]], response: StubResponse) -> None:
        """Server-sent events, chunked, each flushed as it is written; held at the
        response's pause."""
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        deltas = 0
        for name, data in events:
            chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
            if name == "content_block_delta":
                deltas += 1
                if response.pause is not None and deltas == response.pause_after:
                    response.pause.wait(timeout=120)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()
