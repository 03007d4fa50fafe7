"""ASGI guards in front of every route: the Host a request names, the size of its body,
the number of open websockets. Each refusal is a coded JSON error (or, for a websocket,
a refused handshake) and reaches no route."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from .errors import error_body

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def host_name(host_header: str) -> str:
    """The name in a Host header, without port or IPv6 brackets, lowercased."""
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def is_loopback_host(host_header: str) -> bool:
    name = host_name(host_header)
    return name in LOOPBACK_NAMES or name.endswith(".localhost")


@dataclass
class Guards:
    """`loopback_only`: token-less mode, where any page a browser loads could otherwise
    reach the service by rebinding its own name to 127.0.0.1."""

    app: ASGIApp
    max_body_bytes: int
    max_websockets: int
    loopback_only: bool
    open_websockets: int = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self.loopback_only and not is_loopback_host(_header(scope, b"host")):
            await self._refuse(scope, receive, send, 403, "FORBIDDEN",
                               "this service answers only requests addressed to a loopback "
                               "name (localhost, 127.0.0.1, [::1]); configure API tokens to "
                               "serve other names")
            return
        if kind == "websocket":
            await self._websocket(scope, receive, send)
        else:
            await self._http(scope, receive, send)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.open_websockets >= self.max_websockets:
            await self._refuse(scope, receive, send, 503, "UNAVAILABLE", "")
            return
        self.open_websockets += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open_websockets -= 1

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Reads the whole body first (a GraphQL request needs all of it anyway), so an
        oversized one is refused before any route sees it."""
        too_large = (f"the request body is larger than {self.max_body_bytes} bytes "
                     "(CTXDAG_MAX_REQUEST_BYTES)")
        declared = _header(scope, b"content-length")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await _json(send, 413, error_body(too_large))
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.max_body_bytes:
                await _json(send, 413, error_body(too_large))
                return
            if not message.get("more_body"):
                break
        pending = [{"type": "http.request", "body": bytes(body), "more_body": False}]

        async def replay() -> Message:
            return pending.pop() if pending else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, status: int,
                      code: str, message: str) -> None:
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008 if status == 403 else 1013})
            return
        await _json(send, status, error_body(message, code))


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return ""


async def _json(send: Send, status: int, body: dict) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})
