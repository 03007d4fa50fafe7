"""The MCP tools over streamable HTTP, for the GraphQL service to serve at /mcp.

Stateless, with JSON answers: every request is one exchange that names its caller by its
own bearer token, so a tool call is answered for that token's tenant alone and nothing
lasts between requests (no session to hand from one caller to another, no stream left
open). The service in front refuses a request without a valid token before it arrives
here (service/api/mcp_route.py); the Host and Origin of a request are checked there too,
so the SDK's own check, which knows only loopback names, is left off.
"""
from __future__ import annotations

import json
from contextlib import AbstractAsyncContextManager
from typing import Any, Callable

from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings

from ..auth import TOKEN_REQUIRED
from ..errors import Unauthenticated
from ..store import Ledger
from .server import mcp_server

Authenticate = Callable[[str | None], str | None]  # an Authorization value → its tenant


class McpEndpoint:
    def __init__(self, authenticate: Authenticate, ledger_of: Callable[[str], Ledger]) -> None:
        """`ledger_of`: the ledger of a tenant."""
        def ledger_for(ctx: Context) -> Ledger:
            tenant = authenticate((ctx.headers or {}).get("authorization"))
            if tenant is None:
                raise Unauthenticated(TOKEN_REQUIRED)
            return ledger_of(tenant)

        self.server = mcp_server(ledger_for)
        self.server.streamable_http_app(stateless_http=True, json_response=True,
                                        transport_security=TransportSecuritySettings(
                                            enable_dns_rebinding_protection=False))
        self._sessions = self.server.session_manager

    def running(self) -> AbstractAsyncContextManager[None]:
        """Held for as long as the service serves (its lifespan)."""
        return self._sessions.run()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["method"] == "GET":
            await _no_event_stream(send)
            return
        await self._sessions.handle_request(scope, receive, send)


async def _no_event_stream(send: Any) -> None:
    payload = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "Method Not Allowed: this server sends no events; "
                                   "POST requests"}}).encode()
    await send({"type": "http.response.start", "status": 405, "headers": [
        (b"content-type", b"application/json"), (b"allow", b"POST"),
        (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})
