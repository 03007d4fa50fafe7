"""The ASGI vocabulary the guards and CORS share: scope headers and JSON answers."""
from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def header(scope: Scope, name: bytes) -> str:
    return header_or_none(scope, name) or ""


def header_or_none(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


async def send_json(send: Send, status: int, body: dict, prefix: str = "") -> None:
    """`prefix`: "websocket." answers a websocket handshake (the ASGI denial response)."""
    payload = json.dumps(body).encode()
    await send({"type": f"{prefix}http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode())]})
    await send({"type": f"{prefix}http.response.body", "body": payload})
