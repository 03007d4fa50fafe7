"""Subscriptions over plain HTTP, as multipart streams (`Accept: multipart/mixed;
subscriptionSpec=1.0`, the protocol Apollo Client speaks over HttpLink): read by a
streaming HTTP client and by Apollo Client itself, with auth, tenants, the bound on
long-lived connections, and shutdown."""
from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import subprocess
import types
import uuid
from typing import AsyncIterator

import httpx
import pytest
import pytest_asyncio
import websockets

from tests.api_client import Client
from tests.app_server import serve
from tests.integration.test_api import new_session
from tests.node_clients import NodeClientUnavailable, run_async
from tests.service_process import ServiceProcess

MULTIPART = "multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/json"
EVENTS = ("subscription($s: ID!, $after: Int) { sessionEvents(sessionId: $s, after: $after)"
          " { type seq sessionId } }")
APPEND = ("mutation($s: ID!, $c: String!) { appendMessage(sessionId: $s, role: USER, "
          "content: $c) { id } }")
MAX_STREAMS = 2
BOUNDARY = b"--graphql"


class Stream:
    """One multipart subscription: its response, and its parts as they arrive."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._bytes = response.aiter_raw()
        self._buffer = b""

    async def next(self, timeout: float = 30) -> dict | None:
        """The next payload (heartbeats, empty parts, are skipped); None once it completed."""
        async with asyncio.timeout(timeout):
            while True:
                part = await self._part()
                if part is None:
                    return None
                if part:
                    return part["payload"]

    async def _part(self) -> dict | None:
        """The next part's JSON ({} for a heartbeat or an empty part); None at the close
        delimiter. Parts follow `--graphql`, up to the next `\r\n--graphql`."""
        while True:
            start = self._buffer.find(BOUNDARY)
            if start >= 0:
                rest = self._buffer[start + len(BOUNDARY):]
                if rest.startswith(b"--"):
                    return None
                end = rest.find(b"\r\n" + BOUNDARY)
                if end >= 0:
                    part, self._buffer = rest[:end], rest[end + 2:]
                    headers, _, body = part.strip().partition(b"\r\n\r\n")
                    if not body:
                        return {}
                    assert b"application/json" in headers, part
                    return json.loads(body)
            chunk = await anext(self._bytes, None)
            if chunk is None:
                raise ConnectionError(f"the stream ended without completing: {self._buffer!r}")
            self._buffer += chunk


@contextlib.asynccontextmanager
async def subscribe(url: str, client: Client, query: str = EVENTS,
                    headers: dict | None = None, **variables) -> AsyncIterator[Stream]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(30, read=None)) as http:
        request = http.build_request("POST", f"{url}/graphql", json={
            "query": query, "variables": variables},
            headers={**client.headers, "Accept": MULTIPART, **(headers or {})})
        response = await http.send(request, stream=True)
        try:
            yield Stream(response)
        finally:
            await response.aclose()


async def test_a_subscription_over_http_replays_then_streams_live_events(api):
    session = (await new_session(api.client, title="multipart"))["id"]
    await api.client(APPEND, s=session, c="before the subscription")
    async with subscribe(api.url, api.client, s=session, after=0) as stream:
        assert stream.response.status_code == 200
        assert stream.response.headers["content-type"].startswith("multipart/mixed")
        replayed = [await stream.next() for _ in range(2)]
        assert [p["data"]["sessionEvents"]["type"] for p in replayed] == [
            "NODE_APPENDED", "HEAD_MOVED"], replayed
        await api.client(APPEND, s=session, c="while subscribed")
        live = await stream.next()
        assert live["data"]["sessionEvents"]["type"] == "NODE_APPENDED"
        assert live["data"]["sessionEvents"]["seq"] == replayed[-1]["data"][
            "sessionEvents"]["seq"] + 1


async def test_a_subscription_over_http_needs_a_token_and_sees_only_its_tenant(api):
    session = (await new_session(api.client, title="theirs"))["id"]
    for client, code in ((api.anonymous, "UNAUTHENTICATED"), (api.other, "NOT_FOUND"),
                         (Client(api.url, "not-a-token"), "UNAUTHENTICATED")):
        async with subscribe(api.url, client, s=session, after=0) as stream:
            payload = await stream.next()
            assert payload["data"] is None, payload
            assert [e["extensions"]["code"] for e in payload["errors"]] == [code], payload
            assert await stream.next() is None  # completed
    # Bookmarks are read as for any request: a malformed one is refused (bookmarks.py).
    async with subscribe(api.url, Client(api.url, api.client.token), s=session, after=0,
                         headers={"Ctxdag-Bookmarks": "not a bookmark"}) as stream:
        payload = await stream.next()
        assert [e["extensions"]["code"] for e in payload["errors"]] == ["BAD_INPUT"], payload
        assert "bookmark" in payload["errors"][0]["message"], payload


async def test_only_subscriptions_stream_and_errors_are_coded(api):
    """A stream answers in its own framing: a query sent to be streamed, or a document that
    does not parse, is one BAD_INPUT payload, then the stream completes."""
    from tests.integration.test_http_transport import server_errors

    with server_errors() as errors:
        for query, says in (("{ __typename }", "queries are not allowed"),
                            ("subscription {", "Syntax Error")):
            async with subscribe(api.url, api.client, query) as stream:
                payload = await stream.next()
                (error,) = payload["errors"]
                assert error["extensions"]["code"] == "BAD_INPUT", payload
                assert says in error["message"], payload
                assert await stream.next() is None
    assert [r.getMessage() for r in errors] == []


async def test_the_hint_for_a_plain_subscription_names_what_works(api):
    """The hint's header is the one the streams above are opened with."""
    body = await api.client.post(EVENTS, {"s": "ses_x"})
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_INPUT"
    assert "over a websocket" in error["message"]
    assert "Accept: multipart/mixed;subscriptionSpec=1.0" in error["message"], error
    session = (await new_session(api.client, title="hint"))["id"]
    hinted = {"Accept": "multipart/mixed;subscriptionSpec=1.0"}
    async with httpx.AsyncClient(headers={**api.client.headers, **hinted}) as http:
        async with http.stream("POST", f"{api.url}/graphql", json={
                "query": EVENTS, "variables": {"s": session, "after": 0}}) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("multipart/mixed")


# Apollo Client's HttpLink, which subscribes over multipart HTTP


@pytest.mark.parametrize("packages", ["apollo3", "apollo4"])
async def test_apollo_subscribes_over_http(api, packages):
    session = (await new_session(api.client, title=f"{packages} subscribes"))["id"]
    await api.client(APPEND, s=session, c="before the subscription")
    try:
        out = await run_async("apollo_subscription.mjs", packages, f"{api.url}/graphql",
                              api.client.token, session)
    except NodeClientUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    assert "error" not in out, out
    assert out["accept"].startswith("multipart/mixed"), out
    events = out["events"]
    # The append made before, replayed; then the one made once subscribed, live.
    assert [e["type"] for e in events] == ["NODE_APPENDED", "HEAD_MOVED"] * 2, out
    assert [e["seq"] for e in events] == [1, 2, 3, 4] and out["appended"], out


# The bound on long-lived connections, shared with websockets


@pytest_asyncio.fixture(scope="module")
async def bounded(neo4j_driver):
    from service.config import Settings
    from service.store import Database

    run = uuid.uuid4().hex[:8]
    token = f"token-streams-{run}"
    settings = Settings.from_env({"CTXDAG_API_TOKENS": f"{token}=tenant-streams-{run}",
                                  "CTXDAG_MAX_WEBSOCKETS": str(MAX_STREAMS)})
    async with serve(settings, Database(neo4j_driver)) as url:
        yield types.SimpleNamespace(url=url, client=Client(url, token))


async def test_subscription_streams_count_against_the_websocket_bound(bounded):
    """CTXDAG_MAX_WEBSOCKETS bounds websockets and HTTP subscription streams together: each
    holds a connection and a subscription for as long as it lasts (an HTTP/1.1 connection
    carries one at a time)."""
    session = (await new_session(bounded.client, title="bounded"))["id"]
    await bounded.client(APPEND, s=session, c="an event to replay")
    ws_url = bounded.url.replace("http://", "ws://") + "/graphql"
    async with contextlib.AsyncExitStack() as stack:
        # Held in a list: a Stream dropped closes its response (its byte iterator is
        # finalized), and with it the connection.
        streams = [await stack.enter_async_context(
            subscribe(bounded.url, bounded.client, s=session, after=0))
            for _ in range(MAX_STREAMS)]
        for stream in streams:
            assert (await stream.next())["data"]["sessionEvents"]["seq"] == 1
        async with httpx.AsyncClient(headers={**bounded.client.headers,
                                              "Accept": MULTIPART}) as http:
            over = await http.post(f"{bounded.url}/graphql", json={
                "query": EVENTS, "variables": {"s": session}})
            plain = await http.post(f"{bounded.url}/graphql", json={"query": "{ __typename }"},
                                    headers={"Accept": "application/json"})
        assert over.status_code == 503, over.text
        (error,) = over.json()["errors"]
        assert error["extensions"]["code"] == "UNAVAILABLE", error
        assert "CTXDAG_MAX_WEBSOCKETS" in error["message"], error
        assert plain.json()["data"] == {"__typename": "Query"}  # short requests still pass
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with websockets.connect(ws_url, subprotocols=["graphql-transport-ws"]):
                pass
        assert refused.value.response.status_code == 503
    # Closed streams free their places, once the server has seen them go.
    for _ in range(100):
        async with subscribe(bounded.url, bounded.client, s=session, after=0) as stream:
            if stream.response.status_code == 200:
                assert (await stream.next())["data"]["sessionEvents"]["seq"] == 1
                break
        await asyncio.sleep(0.1)
    else:
        pytest.fail("a closed subscription stream never freed its place")


# Shutdown


async def test_sigterm_ends_open_subscription_streams_and_stops_the_service(neo4j_server):
    """A stream ends only when its client leaves; at shutdown the service closes it, as it
    closes websockets, instead of waiting for it forever."""
    process = ServiceProcess({"NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
                              "NEO4J_PASSWORD": neo4j_server.password,
                              "CTXDAG_TENANT": f"streams-{uuid.uuid4().hex[:6]}"})
    with process:
        client = Client(process.url)
        session = (await new_session(client, title="shutdown"))["id"]
        await client(APPEND, s=session, c="an event to replay")
        async with subscribe(process.url, client, s=session, after=0) as stream:
            assert (await stream.next())["data"]["sessionEvents"]["seq"] == 1
            process.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(process.process.wait, 60)
            except subprocess.TimeoutExpired:
                process.process.kill()
                pytest.fail("ctxdag serve still waits for the open stream after SIGTERM:\n"
                            + process.output[-2000:])
            with pytest.raises((ConnectionError, httpx.HTTPError)):
                while await stream.next() is not None:
                    pass
        assert "Application shutdown complete" in process.output, process.output[-3000:]
