"""Which browser pages may call the service: CTXDAG_CORS_ORIGINS, answered by the guards.

- a preflight (OPTIONS with Origin and Access-Control-Request-Method) from a listed
  origin is answered 204 with the allowed methods (GET, POST, OPTIONS) and headers
  (Authorization, Content-Type, Accept, and any other the page asks for, but the
  forwarding headers), on any path; the browser itself refuses a method or header not
  listed. From any other origin a preflight is refused 403 FORBIDDEN, without CORS
  headers, so the browser blocks the request;
- every other response to a listed origin (errors and the body-size refusal included, so
  the page can read their codes; not the Host refusal, which comes first) names the
  origin in Access-Control-Allow-Origin; a response to another origin carries no CORS
  header, so the browser withholds it from the page;
- credentials are not allowed: tokens travel in the Authorization header, which a page
  sets itself and which needs no cookie or credentials mode;
- with origins configured, every response varies on Origin.

CORS does not apply to websockets, so a handshake with an Origin header is refused
unless it comes from the service's own origin (the scheme, host and port the request was
sent to: GraphiQL and the viewer served here) or a listed one. A handshake without
Origin does not come from a browser and is not checked.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..config import normalize_origin
from .asgi import Message, Scope, Send, header, header_or_none, send_json
from .errors import error_body

METHODS = b"GET, POST, OPTIONS"
ALWAYS_ALLOWED_HEADERS = ("authorization", "content-type", "accept")
MAX_AGE = b"600"  # seconds a browser may reuse a preflight's answer
# Request headers a page may not set through CORS, although the service reads none of
# them: uvicorn trusts forwarding headers from loopback peers, as a local browser is.
REFUSED_HEADERS = re.compile(r"forwarded|x-forwarded-.*|x-real-ip")
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9a-z-]+")


def is_preflight(scope: Scope) -> bool:
    return (scope["method"] == "OPTIONS" and header_or_none(scope, b"origin") is not None
            and header_or_none(scope, b"access-control-request-method") is not None)


@dataclass(frozen=True)
class Cors:
    # Normalized origins (config.normalize_origin) whose pages may call the service.
    origins: frozenset[str] = field(default_factory=frozenset)

    def allowed_origin(self, scope: Scope) -> bytes | None:
        """The request's Origin header as sent, when it names a listed origin."""
        origin = header_or_none(scope, b"origin")
        if origin is None or normalize_origin(origin) not in self.origins:
            return None
        return origin.encode("latin-1")

    def wrap(self, scope: Scope, send: Send) -> Send:
        """`send`, adding the CORS headers to the response's start."""
        if not self.origins:
            return send
        origin = self.allowed_origin(scope)

        async def with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = _vary(list(message.get("headers", ())), b"Origin")
                if origin is not None:
                    headers.append((b"access-control-allow-origin", origin))
                message = {**message, "headers": headers}
            await send(message)

        return with_cors

    async def preflight(self, scope: Scope, send: Send) -> None:
        """Answered for every path: a path that does not exist answers the request itself."""
        origin = header(scope, b"origin")
        if self.allowed_origin(scope) is None:
            await send_json(send, 403, error_body(
                f"a page on {origin!r} may not call this service: its origin is not one of "
                "CTXDAG_CORS_ORIGINS", "FORBIDDEN"))
            return
        allowed = list(ALWAYS_ALLOWED_HEADERS)
        for name in header(scope, b"access-control-request-headers").lower().split(","):
            name = name.strip()
            if HEADER_NAME.fullmatch(name) and not REFUSED_HEADERS.fullmatch(name) \
                    and name not in allowed:
                allowed.append(name)
        headers = [(b"access-control-allow-methods", METHODS),
                   (b"access-control-allow-headers", ", ".join(allowed).encode()),
                   (b"access-control-max-age", MAX_AGE)]
        await send({"type": "http.response.start", "status": 204,
                    "headers": _vary(headers, b"Access-Control-Request-Method, "
                                              b"Access-Control-Request-Headers")})
        await send({"type": "http.response.body", "body": b""})

    def websocket_allowed(self, scope: Scope, origin: str) -> bool:
        normalized = normalize_origin(origin)
        if normalized is None:
            return False
        scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
        own = normalize_origin(f"{scheme}://{header(scope, b'host')}")
        return normalized == own or normalized in self.origins


def _vary(headers: list[tuple[bytes, bytes]], names: bytes) -> list[tuple[bytes, bytes]]:
    """`headers` with `names` added to their Vary header (one is made if there is none)."""
    for i, (key, value) in enumerate(headers):
        if key.lower() == b"vary":
            headers[i] = (key, value + b", " + names)
            return headers
    headers.append((b"vary", names))
    return headers
