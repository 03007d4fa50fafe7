"""GraphQL over HTTP and websockets, with the request-level bounds of limits.py.

A request body that cannot be decoded (malformed, nested deeper than the decoder can
follow, or not Unicode: unicode.py) is refused with a coded error, and so is a query
document longer than MAX_QUERY_CHARS — before it is parsed, on both transports. HTTP
refusals carry the same JSON error shape as GraphQL errors. Over HTTP a query may also be
sent as its persisted hash (persisted.py).

A browser opening /graphql (a GET without an operation, asking for text/html) gets
ctxdag's own GraphiQL page (graphiql.py).
"""
from __future__ import annotations

import json
from typing import Any

from cross_web import HTTPException
from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse
from graphql import GraphQLError, OperationType, parse
from graphql.utilities import get_operation_ast
from strawberry.exceptions import ConnectionRejectionError
from strawberry.fastapi import GraphQLRouter
from strawberry.subscriptions import (
    GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL, MULTIPART_SUBSCRIPTION_PROTOCOL,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_ws.handlers import BaseGraphQLWSHandler

from .bookmarks import websocket_operation_extensions
from .context import Context
from .encoding import OffLoopJSONResponse, OffLoopWebSocketAdapter
from .errors import error_body
from .graphiql import graphiql_page, serve_graphiql_asset, wants_graphiql
from .limits import MAX_QUERY_CHARS, MAX_TOKENS
from .persisted import PersistedQueries
from .unicode import lone_surrogate

# Subscriptions run over a websocket (either protocol), or over HTTP as a multipart stream
# (guards.py bounds those with the websockets; server.py closes them at shutdown).
SUBSCRIPTION_PROTOCOLS = (GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL,
                          MULTIPART_SUBSCRIPTION_PROTOCOL)
SUBSCRIBE_HOW = ("subscribe over a websocket at this path (graphql-transport-ws), or over "
                 "HTTP with Accept: multipart/mixed;subscriptionSpec=1.0")


MUTATION_BY_GET = "mutations are not allowed when using GET"


def is_mutation(query: Any, operation_name: Any) -> bool:
    """Whether the operation a request names is a mutation (False when it cannot tell:
    the request is then refused for what it is)."""
    if not isinstance(query, str):
        return False
    try:
        document = parse(query, max_tokens=MAX_TOKENS)
    except GraphQLError:
        return False
    operation = get_operation_ast(document, operation_name
                                  if isinstance(operation_name, str) else None)
    return operation is not None and operation.operation is OperationType.MUTATION


def query_too_long(query: Any) -> str | None:
    if isinstance(query, str) and len(query) > MAX_QUERY_CHARS:
        return (f"the query document is {len(query)} characters; the limit is "
                f"{MAX_QUERY_CHARS} (pass large values as variables)")
    return None


def _coded_error(message: str) -> dict:
    return error_body(message)["errors"][0]


def refusal(message: Any, running: int, limit: int | None) -> str | None:
    """Why a websocket operation is not started: its message is not Unicode, its query is
    too long, or the connection runs as many operations as it may."""
    payload = message.get("payload")
    refused = lone_surrogate(message) or query_too_long(
        payload.get("query") if isinstance(payload, dict) else None)
    if refused is None and limit is not None and running >= limit:
        refused = (f"at most {limit} operations may run at once on one connection "
                   "(CTXDAG_MAX_SUBSCRIPTIONS_PER_SOCKET)")
    return refused


def _payload_extensions(message: Any) -> Any:
    payload = message.get("payload") if isinstance(message, dict) else None
    return payload.get("extensions") if isinstance(payload, dict) else None


class TransportWSHandler(BaseGraphQLTransportWSHandler):
    async def handle_subscribe(self, message: Any) -> None:
        refused = refusal(message, len(self.operations), self.max_subscriptions_per_connection)
        if refused is None or not self.connection_acknowledged:
            # The operation's task, started inside, copies its `extensions` (bookmarks.py).
            token = websocket_operation_extensions.set(_payload_extensions(message))
            try:
                await super().handle_subscribe(message)
            finally:
                websocket_operation_extensions.reset(token)
            return
        await self.send_message({"id": message["id"], "type": "error",
                                 "payload": [_coded_error(refused)]})


class LegacyWSHandler(BaseGraphQLWSHandler):
    async def handle_start(self, message: Any) -> None:
        refused = refusal(message, len(self.tasks), self.max_subscriptions_per_connection)
        if refused is None or not self.connection_acknowledged:
            token = websocket_operation_extensions.set(_payload_extensions(message))
            try:
                await super().handle_start(message)
            finally:
                websocket_operation_extensions.reset(token)
            return
        await self.send_message({"id": message["id"], "type": "error",
                                 "payload": _coded_error(refused)})


class Router(GraphQLRouter):
    graphql_transport_ws_handler_class = TransportWSHandler
    graphql_ws_handler_class = LegacyWSHandler
    websocket_adapter_class = OffLoopWebSocketAdapter

    def __init__(self, *args: Any, tokens_required: bool = False, **kwargs: Any) -> None:
        """`tokens_required`: GraphiQL's page starts with an Authorization header to fill."""
        super().__init__(*args, subscription_protocols=SUBSCRIPTION_PROTOCOLS, **kwargs)
        self.persisted_queries = PersistedQueries()
        self.tokens_required = tokens_required
        self.add_api_route("/static/{name}", serve_graphiql_asset, methods=["GET"],
                           include_in_schema=False)

    async def render_graphql_ide(self, request: Request) -> HTMLResponse:
        return HTMLResponse(graphiql_page(request.url.path, self.tokens_required),
                            headers={"cache-control": "no-cache",
                                     "x-content-type-options": "nosniff"})

    def create_response(self, response_data: Any, sub_response: Any) -> OffLoopJSONResponse:
        """The answer, encoded when it is sent, a large one off the event loop (encoding.py)."""
        response = OffLoopJSONResponse(response_data, sub_response.status_code or 200)
        response.headers.raw.extend(sub_response.headers.raw)
        return response

    def should_render_graphql_ide(self, request: Any) -> bool:
        return wants_graphiql(request.method, request.query_params,
                              request.headers.get("accept", ""))

    def decode_json(self, data: str | bytes) -> object:
        try:
            return json.loads(data)
        except RecursionError:
            raise json.JSONDecodeError("JSON nested too deeply", "", 0) from None

    def parse_json(self, data: str | bytes) -> Any:
        """An HTTP request's body or GET parameter."""
        value = super().parse_json(data)
        refused = lone_surrogate(value)
        if refused is not None:
            raise HTTPException(400, refused)
        return value

    async def parse_http_body(self, request: Any) -> Any:
        data = await super().parse_http_body(request)
        for item in data if isinstance(data, list) else [data]:
            refused = query_too_long(item.query)
            if refused is not None:
                raise HTTPException(400, refused)
        return data

    async def execute_operation(self, *, request_data: Any, context: Any, **kwargs: Any) -> Any:
        """Runs persisted queries (persisted.py) as their tenant's. A mutation sent by GET
        is refused alike whether it asks for a stream or not (strawberry would answer a
        stream's with an error part, status 200)."""
        tenant = context.tenant if isinstance(context, Context) else None
        for item in request_data if isinstance(request_data, list) else [request_data]:
            item.query = self.persisted_queries.resolve(tenant, item.query, item.extensions)
        adapter = kwargs.get("request_adapter")
        if adapter is not None and adapter.method == "GET" \
                and not isinstance(request_data, list) and request_data.protocol != "http" \
                and is_mutation(request_data.query, request_data.operation_name):
            raise HTTPException(405, MUTATION_BY_GET)
        return await super().execute_operation(request_data=request_data, context=context,
                                               **kwargs)

    async def on_ws_connect(self, context: Any) -> Any:
        """A browser cannot set headers on a websocket, so a connection without an
        Authorization header may carry it in its `connection_init` payload
        (`{"Authorization": "Bearer …"}`); a token there that names no tenant is refused.
        Bookmarks there (`bookmarks`, bookmarks.py) join the connection's."""
        params = getattr(context, "connection_params", None)
        refused = lone_surrogate(params)
        if refused is not None:
            raise ConnectionRejectionError({"code": "BAD_INPUT", "message": refused})
        if isinstance(context, Context):
            context.bookmarks.add_connection_init(params)
        given = params.get("Authorization") or params.get("authorization") \
            if isinstance(params, dict) else None
        if isinstance(context, Context) and context.tenant is None and given is not None:
            context.tenant = context.authenticate(given if isinstance(given, str) else None)
            context.may_redact = context.redactor(given if isinstance(given, str) else None)
            if context.tenant is None:
                raise ConnectionRejectionError({"code": "UNAUTHENTICATED",
                                                "message": "the token in connection_init "
                                                           "names no tenant"})
        return await super().on_ws_connect(context)

    async def run(self, request: Any, **kwargs: Any) -> Any:
        try:
            return await super().run(request, **kwargs)
        except HTTPException as e:
            reason = e.reason
            status, headers = e.status_code, {}
            if reason.startswith("subscriptions are not allowed"):
                reason += f"; {SUBSCRIBE_HOW}"
            if reason == MUTATION_BY_GET:  # GraphQL over HTTP: 405, a mutation needs POST
                status, headers = 405, {"allow": "POST"}
            return JSONResponse(error_body(reason, getattr(e, "code", "BAD_INPUT")),
                                status_code=status, headers=headers)

