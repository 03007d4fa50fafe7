"""The HTTP server around the app: uvicorn, with bounds on slow and numerous clients.

uvicorn has no deadline for reading a request: a client that opens a connection and
sends its headers or body a byte at a time holds the connection as long as it likes.
`RequestReadDeadline` closes a connection whose request has not fully arrived within
the read timeout of its first byte (or of the connection, if nothing came).

At shutdown uvicorn lets every response in progress finish, and closes websockets
(1012). A subscription streamed over HTTP never finishes by itself: its connection is
closed instead, as its websocket would be, and its client reconnects elsewhere.
"""
from __future__ import annotations

import asyncio

import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ..config import Settings
from .guards import asks_for_subscription_stream


class RequestReadDeadline(HttpToolsProtocol):
    read_timeout_seconds: float = 10.0
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if self.cycle is None or self.cycle.response_complete:
            self._arm()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def shutdown(self) -> None:
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete \
                and asks_for_subscription_stream(cycle.scope):
            self.transport.close()
            return
        super().shutdown()

    def handle_websocket_upgrade(self) -> None:
        self._disarm()
        super().handle_websocket_upgrade()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.read_timeout_seconds, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.transport.close()


def server_config(app: FastAPI, settings: Settings, host: str, port: int,
                  log_level: str = "info") -> uvicorn.Config:
    protocol = type("BoundedHttpProtocol", (RequestReadDeadline,),
                    {"read_timeout_seconds": settings.request_read_timeout_seconds})
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on",
                          http=protocol, limit_concurrency=settings.max_connections,
                          ws_max_size=settings.max_request_bytes)
