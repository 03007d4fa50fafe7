"""The FastAPI application: /graphql (GraphiQL in a browser, its assets under
/graphql/static/), /mcp (the MCP tools, mcp_route.py), /healthz."""
from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator, Callable

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import HTTPConnection

from ..auth import may_redact, tenant_for
from ..config import Settings
from ..errors import CtxdagError
from ..mcp.http import McpEndpoint
from ..runtime import Runtime
from ..store import Database
from .bookmark_seal import BookmarkSeal
from .bookmarks import HEADER as BOOKMARKS_HEADER, ClientBookmarks
from .context import Context
from .cors import Cors
from .errors import route_refused
from .guards import Guards
from .mcp_route import PATH as MCP_PATH, McpRoute
from .schema import schema
from .transport import Router
from .ui import mount_ui

HEALTH_TIMEOUT_SECONDS = 5.0


def create_app(settings: Settings, database: Database | None = None,
               on_shutdown: Callable[[], None] | None = None) -> Guards:
    """`database`: an open one to use (tests); None opens one at startup and closes it after.

    `on_shutdown` runs last when the app stops (serve stops the Neo4j it started there:
    uvicorn re-raises SIGTERM once the app has shut down, so later code would not run).
    """

    def authenticate(authorization: str | None) -> str | None:
        return tenant_for(authorization, settings.api_tokens, settings.tenant)

    mcp = McpEndpoint(authenticate, lambda tenant: app.state.runtime.for_tenant(tenant).ledger)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = (Runtime.assemble(settings, database) if database is not None
                   else await Runtime.open(settings))
        app.state.runtime = runtime
        # Planned before the first request rather than during it.
        await runtime.database.plan_statements()
        try:
            async with mcp.running():
                yield
        finally:
            await runtime.drain()  # the streamed turns still running are stored first
            await runtime.events.close()
            if database is None:
                await runtime.close()
            if on_shutdown is not None:
                await asyncio.to_thread(on_shutdown)

    app = FastAPI(title="ctxdag", lifespan=lifespan,
                  exception_handlers={StarletteHTTPException: route_refused})

    def redactor(authorization: str | None) -> bool:
        return may_redact(authorization, settings.api_tokens, settings.redact_tokens)

    bookmark_seal = BookmarkSeal.for_settings(settings)

    async def context(connection: HTTPConnection) -> Context:
        runtime: Runtime = connection.app.state.runtime
        authorization = connection.headers.get("authorization")
        return Context(runtime, authenticate(authorization),
                       authenticate, ClientBookmarks.from_headers(
                           connection.headers.getlist(BOOKMARKS_HEADER)),
                       bookmark_seal=bookmark_seal, redactor=redactor,
                       authorization=authorization)

    # The guards check a websocket's Origin first (guards.py); strawberry checks it again
    # with the same list, and its rule (same host and port) admits whatever they admit.
    app.include_router(Router(schema, context_getter=context, max_subscriptions_per_connection=
                              settings.max_subscriptions_per_socket,
                              allowed_origins=settings.cors_origins,
                              tokens_required=bool(settings.api_tokens)), prefix="/graphql")

    app.router.add_route(MCP_PATH, McpRoute(mcp, authenticate), include_in_schema=False)
    mount_ui(app)

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        runtime: Runtime = app.state.runtime
        try:
            agent = await asyncio.wait_for(runtime.database.ping(), HEALTH_TIMEOUT_SECONDS)
        except (CtxdagError, asyncio.TimeoutError) as e:
            reason = e.message if isinstance(e, CtxdagError) else "Neo4j did not answer in time"
            return JSONResponse({"status": "unavailable", "neo4j": None, "error": reason},
                                status_code=503)
        return JSONResponse({"status": "ok", "neo4j": agent})

    return Guards(app, max_body_bytes=settings.max_request_bytes,
                  max_websockets=settings.max_websockets, loopback_only=not settings.api_tokens,
                  cors=Cors(frozenset(settings.cors_origins)))
