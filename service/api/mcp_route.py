"""/mcp: the MCP tools over streamable HTTP (service/mcp/http.py) for the tenant of the
request's bearer token. A request without a valid one is refused in the words the GraphQL
API uses (UNAUTHENTICATED), with the status and challenge HTTP and MCP clients expect."""
from __future__ import annotations

import json

from ..auth import TOKEN_REQUIRED
from ..mcp.http import Authenticate, McpEndpoint
from .asgi import Receive, Scope, Send, header_or_none
from .errors import NOSNIFF, error_body

PATH = "/mcp"


class McpRoute:
    def __init__(self, endpoint: McpEndpoint, authenticate: Authenticate) -> None:
        self.endpoint = endpoint
        self.authenticate = authenticate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.authenticate(header_or_none(scope, b"authorization")) is None:
            payload = json.dumps(error_body(TOKEN_REQUIRED, "UNAUTHENTICATED")).encode()
            await send({"type": "http.response.start", "status": 401, "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"www-authenticate", b'Bearer realm="ctxdag"'),
                *((k.encode(), v.encode()) for k, v in NOSNIFF.items())]})
            await send({"type": "http.response.body", "body": payload})
            return
        await self.endpoint(scope, receive, send)
