"""ASGI guards in front of every route: the Host a request names, the size of its body,
the Origin of a websocket handshake, the number of open websockets and HTTP subscription
streams (both last as long as their client likes). Each refusal is a coded JSON error
(for a websocket, the HTTP answer refusing its handshake) and reaches no route. CORS
(cors.py) is answered here too, after the Host check and the body bound, so a preflight
passes the guards as any request does.
"""
from __future__ import annotations

import contextvars
import logging
from dataclasses import dataclass, field

from strawberry.http.streaming import MultipartSubscriptionTransport

from .asgi import ASGIApp, Message, Receive, Scope, Send, header, header_or_none, send_json
from .cors import Cors, is_preflight
from .errors import error_body

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})

# uvicorn's websockets-sansio protocol (its default) logs this at ERROR after every
# handshake an app refuses with a denial response, although it sent the response
# (https://github.com/Kludex/uvicorn/pull/3138). The line is dropped for the handshakes
# the guards refused, and only for them: the flag lives in the connection's own context.
SPURIOUS_HANDSHAKE_ERROR = "ASGI callable returned without completing handshake."
_handshake_denied: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "ctxdag_handshake_denied", default=False)


class DeniedHandshakeFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (_handshake_denied.get() and record.getMessage() == SPURIOUS_HANDSHAKE_ERROR)


_MULTIPART = MultipartSubscriptionTransport()


def asks_for_subscription_stream(scope: Scope) -> bool:
    """An HTTP request strawberry answers with a multipart subscription stream, by the
    rule it uses itself (its Accept header)."""
    return scope["type"] == "http" and _MULTIPART.accepts(header(scope, b"accept"))


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
    cors: Cors = field(default_factory=Cors)
    # Websockets and HTTP subscription streams, bounded together by max_websockets.
    open_streams: int = 0

    def __post_init__(self) -> None:
        uvicorn_log = logging.getLogger("uvicorn.error")
        if not any(isinstance(f, DeniedHandshakeFilter) for f in uvicorn_log.filters):
            uvicorn_log.addFilter(DeniedHandshakeFilter())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self.loopback_only and not is_loopback_host(header(scope, b"host")):
            await self._refuse(scope, receive, send, 403, "FORBIDDEN",
                               "this service answers only requests addressed to a loopback "
                               "name (localhost, 127.0.0.1, [::1]); configure API tokens to "
                               "serve other names")
            return
        if kind == "websocket":
            await self._websocket(scope, receive, send)
        else:
            await self._http(scope, receive, self.cors.wrap(scope, send))

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        origin = header_or_none(scope, b"origin")
        if origin is not None and not self.cors.websocket_allowed(scope, origin):
            await self._refuse(scope, receive, send, 403, "FORBIDDEN",
                               f"a page on {origin!r} may not open a websocket here: only "
                               "this service's own origin and those of CTXDAG_CORS_ORIGINS "
                               "may")
            return
        await self._stream(scope, receive, send)

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.open_streams >= self.max_websockets:
            await self._refuse(scope, receive, send, 503, "UNAVAILABLE",
                               f"{self.max_websockets} websockets and subscription streams "
                               "are open, as many as may be (CTXDAG_MAX_WEBSOCKETS); try "
                               "again later")
            return
        self.open_streams += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.open_streams -= 1

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Reads the whole body first (a GraphQL request needs all of it anyway), so an
        oversized one is refused before any route sees it."""
        too_large = (f"the request body is larger than {self.max_body_bytes} bytes "
                     "(CTXDAG_MAX_REQUEST_BYTES)")
        declared = header(scope, b"content-length")
        if declared.isdigit() and int(declared) > self.max_body_bytes:
            await send_json(send, 413, error_body(too_large))
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.max_body_bytes:
                await send_json(send, 413, error_body(too_large))
                return
            if not message.get("more_body"):
                break
        pending = [{"type": "http.request", "body": bytes(body), "more_body": False}]

        async def replay() -> Message:
            return pending.pop() if pending else await receive()

        if is_preflight(scope):
            await self.cors.preflight(scope, send)
        elif asks_for_subscription_stream(scope):
            await self._stream(scope, replay, send)
        else:
            await self.app(scope, replay, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, status: int,
                      code: str, message: str) -> None:
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            if "websocket.http.response" in scope.get("extensions", {}):
                # The handshake is answered with the status and the coded JSON error.
                _handshake_denied.set(True)
                await send_json(send, status, error_body(message, code), "websocket.")
            else:  # closing before accepting: the server answers the handshake with 403
                await send({"type": "websocket.close",
                            "code": 1008 if status == 403 else 1013})
            return
        await send_json(send, status, error_body(message, code))


