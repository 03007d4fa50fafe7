"""CORS for browser pages on other origins (CTXDAG_CORS_ORIGINS), and the Origin check of
websocket handshakes, against the real app served by uvicorn."""
from __future__ import annotations

import asyncio
import json
import logging
import types
import uuid

import httpx
import pytest
import pytest_asyncio
import websockets

from service.api.cors import Cors
from service.api.guards import Guards
from tests.app_server import serve

ALLOWED = "http://localhost:5173"
FOREIGN = "http://evil.example:5173"
MAX_REQUEST_BYTES = 64 * 1024
QUERY = {"query": "query { __typename }"}


@pytest_asyncio.fixture(scope="module")
async def cors_api(neo4j_driver):
    """As conftest's `api`, with CTXDAG_CORS_ORIGINS naming ALLOWED (written unnormalized)."""
    from service.config import Settings
    from service.store import Database

    run = uuid.uuid4().hex[:8]
    token = f"token-cors-{run}"
    settings = Settings.from_env({
        "CTXDAG_API_TOKENS": f"{token}=tenant-cors-{run}",
        "CTXDAG_CORS_ORIGINS": "HTTP://LocalHost:5173/, https://app.example.com",
        "CTXDAG_MAX_REQUEST_BYTES": str(MAX_REQUEST_BYTES),
    })
    async with serve(settings, Database(neo4j_driver)) as url:
        yield types.SimpleNamespace(url=url, ws=url.replace("http://", "ws://") + "/graphql",
                                    headers={"Authorization": f"Bearer {token}"})


def preflight_headers(origin: str, request_headers: str = "authorization, content-type"):
    return {"Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": request_headers}


def vary(response: httpx.Response) -> list[str]:
    return [v.strip().lower() for v in response.headers.get("vary", "").split(",") if v.strip()]


def assert_no_cors(response: httpx.Response) -> None:
    assert not [h for h in response.headers if h.lower().startswith("access-control-")], \
        dict(response.headers)


def assert_forbidden(body: dict, says: str) -> None:
    error = body["errors"][0]
    assert error["extensions"]["code"] == "FORBIDDEN" and says in error["message"], body


async def handshake(url: str, **options) -> dict:
    """A graphql-transport-ws connection: connection_init, then `query { __typename }`."""
    async with websockets.connect(url, subprotocols=["graphql-transport-ws"], **options) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        assert json.loads(await ws.recv())["type"] == "connection_ack"
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": QUERY}))
        return json.loads(await asyncio.wait_for(ws.recv(), 30))


async def refused_handshake(url: str, **options) -> websockets.InvalidStatus:
    with pytest.raises(websockets.InvalidStatus) as refused:
        async with websockets.connect(url, subprotocols=["graphql-transport-ws"], **options):
            pass
    return refused.value


# HTTP from an allowed origin


async def test_a_preflight_from_an_allowed_origin_is_answered(cors_api):
    async with httpx.AsyncClient() as http:
        response = await http.options(f"{cors_api.url}/graphql", headers=preflight_headers(
            ALLOWED, "Authorization, Content-Type, X-Apollo-Operation-Name, traceparent, "
                     "X-Forwarded-For, Forwarded, bad header"))
    assert response.status_code == 204 and response.content == b""
    assert response.headers["access-control-allow-origin"] == ALLOWED
    assert response.headers["access-control-allow-methods"] == "GET, POST, OPTIONS"
    allowed = [h.strip() for h in response.headers["access-control-allow-headers"].split(",")]
    assert allowed == ["authorization", "content-type", "accept", "x-apollo-operation-name",
                       "traceparent"]  # never the forwarding headers uvicorn trusts
    assert int(response.headers["access-control-max-age"]) > 0
    assert "origin" in vary(response)
    assert "access-control-allow-credentials" not in response.headers


async def test_a_query_from_an_allowed_origin_names_it(cors_api):
    async with httpx.AsyncClient() as http:
        response = await http.post(f"{cors_api.url}/graphql", json=QUERY,
                                   headers={**cors_api.headers, "Origin": ALLOWED})
        anonymous = await http.post(f"{cors_api.url}/graphql", headers={"Origin": ALLOWED},
                                    json={"query": "query { sessions { nodes { id } } }"})
    assert response.status_code == 200 and response.json() == {"data": {"__typename": "Query"}}
    assert response.headers["access-control-allow-origin"] == ALLOWED
    assert "origin" in vary(response)
    assert "access-control-allow-credentials" not in response.headers
    # A page reads the coded errors too: here, that it sent no token.
    assert anonymous.headers["access-control-allow-origin"] == ALLOWED
    assert anonymous.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


async def test_a_guards_refusal_to_an_allowed_origin_is_readable(cors_api):
    async with httpx.AsyncClient() as http:
        response = await http.post(f"{cors_api.url}/graphql", headers={"Origin": ALLOWED},
                                   json={"query": "x" * MAX_REQUEST_BYTES})
    assert response.status_code == 413
    assert response.headers["access-control-allow-origin"] == ALLOWED
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_INPUT"


# HTTP from any other origin


async def test_a_preflight_from_another_origin_is_refused_without_cors_headers(cors_api):
    async with httpx.AsyncClient() as http:
        for origin in (FOREIGN, "http://localhost:5174", "https://localhost:5173", "null"):
            response = await http.options(f"{cors_api.url}/graphql",
                                          headers=preflight_headers(origin))
            assert response.status_code == 403, origin
            assert_no_cors(response)
            assert_forbidden(response.json(), "is not one of CTXDAG_CORS_ORIGINS")


async def test_a_query_from_another_origin_carries_no_cors_headers(cors_api):
    async with httpx.AsyncClient() as http:
        response = await http.post(f"{cors_api.url}/graphql", json=QUERY,
                                   headers={**cors_api.headers, "Origin": FOREIGN})
        plain = await http.post(f"{cors_api.url}/graphql", json=QUERY, headers=cors_api.headers)
    for answered in (response, plain):  # served, but a browser withholds it from the page
        assert answered.status_code == 200 and answered.json()["data"]
        assert_no_cors(answered)
        assert "origin" in vary(answered)


async def test_an_options_request_that_is_not_a_preflight_reaches_the_routes(cors_api):
    async with httpx.AsyncClient() as http:
        response = await http.options(f"{cors_api.url}/graphql", headers={"Origin": ALLOWED})
    assert response.status_code == 405


# Websockets


async def test_a_websocket_from_an_allowed_origin_is_accepted(cors_api):
    answer = await handshake(cors_api.ws, origin=ALLOWED, additional_headers=cors_api.headers)
    assert answer == {"id": "1", "type": "next", "payload": {"data": {"__typename": "Query"}}}


async def test_a_websocket_from_another_origin_is_refused_with_a_code(cors_api):
    errors: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = errors.append
    logging.getLogger("uvicorn.error").addHandler(handler)
    try:
        for origin in (FOREIGN, "http://localhost:5174", "https://localhost:5173", "null"):
            refused = await refused_handshake(cors_api.ws, origin=origin,
                                              additional_headers=cors_api.headers)
            assert refused.response.status_code == 403, origin
            assert_forbidden(json.loads(refused.response.body),
                             "may not open a websocket here")
        await asyncio.sleep(0.2)
    finally:
        logging.getLogger("uvicorn.error").removeHandler(handler)
    assert [r.getMessage() for r in errors] == []  # a refusal is no server error


async def test_a_websocket_without_origin_or_from_the_service_itself_is_accepted(cors_api):
    """Non-browser clients send no Origin; GraphiQL served here sends the service's own."""
    assert (await handshake(cors_api.ws, additional_headers=cors_api.headers))["type"] == "next"
    own = await handshake(cors_api.ws, origin=cors_api.url, additional_headers=cors_api.headers)
    assert own["type"] == "next"
    # localhost names the same service, but is another origin than 127.0.0.1
    port = cors_api.url.rsplit(":", 1)[1]
    refused = await refused_handshake(cors_api.ws, origin=f"http://localhost:{port}")
    assert refused.response.status_code == 403


# The default: no origin is allowed


async def test_by_default_no_foreign_origin_is_allowed(api):
    async with httpx.AsyncClient() as http:
        preflight = await http.options(f"{api.url}/graphql", headers=preflight_headers(ALLOWED))
        query = await http.post(f"{api.url}/graphql", json=QUERY,
                                headers={**api.client.headers, "Origin": ALLOWED})
    assert preflight.status_code == 403
    assert_no_cors(preflight)
    assert_forbidden(preflight.json(), "is not one of CTXDAG_CORS_ORIGINS")
    assert query.status_code == 200 and query.json()["data"]
    assert_no_cors(query)
    assert "origin" not in vary(query)

    ws = api.url.replace("http://", "ws://") + "/graphql"
    refused = await refused_handshake(ws, origin=ALLOWED, additional_headers=api.client.headers)
    assert refused.response.status_code == 403
    assert (await handshake(ws, origin=api.url, additional_headers=api.client.headers)
            )["type"] == "next"
    assert (await handshake(ws, additional_headers=api.client.headers))["type"] == "next"


# The guards run before CORS


async def test_a_preflight_passes_the_host_guard_as_any_request_does():
    reached = []

    async def app(scope, receive, send):
        reached.append(scope["path"])

    guards = Guards(app, max_body_bytes=1024, max_websockets=1, loopback_only=True,
                    cors=Cors(frozenset({ALLOWED})))
    transport = httpx.ASGITransport(app=guards)
    async with httpx.AsyncClient(transport=transport, base_url="http://evil.example") as http:
        rebound = await http.options("/graphql", headers=preflight_headers(ALLOWED))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8000") as http:
        local = await http.options("/graphql", headers=preflight_headers(ALLOWED))
    assert rebound.status_code == 403 and "loopback" in rebound.json()["errors"][0]["message"]
    assert_no_cors(rebound)
    assert local.status_code == 204 and local.headers["access-control-allow-origin"] == ALLOWED
    assert reached == []  # a preflight is answered by the guards, never by a route
