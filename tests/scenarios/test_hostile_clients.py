"""Hostile and careless clients against a real `ctxdag serve` process: no request stalls
the service, every error is coded on every transport, slow and numerous clients are bounded."""
from __future__ import annotations

import asyncio
import dataclasses
import json
import signal
import socket as tcp
import time
import uuid

import httpx
import pytest
import websockets

from tests.api_client import Client, socket
from tests.service_process import ServiceProcess
from tests.stubs.anthropic_stub import reply

READ_TIMEOUT = 1
MAX_WEBSOCKETS = 3
SUBSCRIPTIONS_PER_SOCKET = 2
MAX_REQUEST_BYTES = 3 * 1024 * 1024
OPERATION_TIMEOUT = 5
EVENTS = "subscription($s: ID!) { sessionEvents(sessionId: $s) { type } }"


def fragment_bomb(levels: int) -> str:
    """The reported shape: each fragment spreads the next one twice."""
    fragments = " ".join(f"fragment F{i} on Session{{...F{i + 1} ...F{i + 1}}}"
                         for i in range(levels))
    return (f"query{{sessions(first:1){{nodes{{...F0}}}}}} {fragments} "
            f"fragment F{levels} on Session{{id}}")


@pytest.fixture(scope="module")
def hardened(neo4j_server, stub):
    token = f"token-{uuid.uuid4().hex[:8]}"
    process = ServiceProcess({
        "NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
        "NEO4J_PASSWORD": neo4j_server.password,
        "CTXDAG_API_TOKENS": f"{token}=hostile-{uuid.uuid4().hex[:6]}",
        "CTXDAG_REQUEST_READ_TIMEOUT_SECONDS": str(READ_TIMEOUT),
        "CTXDAG_MAX_WEBSOCKETS": str(MAX_WEBSOCKETS),
        "CTXDAG_MAX_SUBSCRIPTIONS_PER_SOCKET": str(SUBSCRIPTIONS_PER_SOCKET),
        "CTXDAG_MAX_REQUEST_BYTES": str(MAX_REQUEST_BYTES),
        "CTXDAG_OPERATION_TIMEOUT_SECONDS": str(OPERATION_TIMEOUT),
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": stub.base_url,
        "CTXDAG_ANTHROPIC_MODEL": "claude-stub", "CTXDAG_ANTHROPIC_MAX_RETRIES": "0",
        "CTXDAG_ANTHROPIC_TIMEOUT": "60",
    })
    with process:
        process.client = Client(process.url, token)
        process.anonymous = Client(process.url)
        yield process


async def new_session(client: Client) -> str:
    return (await client("mutation { createSession(title: \"hostile\") { id } }")
            )["createSession"]["id"]


def assert_coded(errors: list[dict], code: str) -> None:
    assert errors and errors[0]["extensions"]["code"] == code, errors
    message = errors[0]["message"]
    assert "Traceback" not in message and "object is not" not in message, message


async def test_a_fragment_bomb_is_refused_and_the_service_keeps_answering(hardened):
    bomb = fragment_bomb(40)
    assert len(bomb) < 2000
    async with httpx.AsyncClient(timeout=30) as http:
        bombs = [http.post(f"{hardened.url}/graphql", json={"query": bomb}) for _ in range(20)]
        health = [http.get(f"{hardened.url}/healthz") for _ in range(5)]
        answers = await asyncio.gather(*bombs, *health)
    for answer in answers[:20]:
        assert_coded(answer.json()["errors"], "BAD_INPUT")
        assert "fields once its fragments are expanded" in answer.json()["errors"][0]["message"]
    assert all(answer.status_code == 200 for answer in answers[20:])
    # Over a websocket too, and with a token: the bound does not depend on who asks.
    async with socket(hardened.client) as ws:
        messages = await ws.execute(bomb)
    assert messages[0]["type"] == "error"
    assert_coded(messages[0]["payload"], "BAD_INPUT")


async def test_sigterm_stops_the_service_after_an_attack(neo4j_server):
    process = ServiceProcess({"NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
                              "NEO4J_PASSWORD": neo4j_server.password,
                              "CTXDAG_TENANT": f"sigterm-{uuid.uuid4().hex[:6]}"})
    with process:
        async with httpx.AsyncClient(timeout=30) as http:
            await asyncio.gather(*(http.post(f"{process.url}/graphql",
                                             json={"query": fragment_bomb(40)})
                                   for _ in range(5)))
        process.process.send_signal(signal.SIGTERM)
        assert process.process.wait(timeout=30) is not None


async def test_errors_over_the_websocket_are_coded_and_masked(hardened):
    sid = await new_session(hardened.client)
    cases = [
        ("unknown field", "query { sessions { nodes { password } } }", {}, "BAD_INPUT"),
        ("syntax", "query { sessions(", {}, "BAD_INPUT"),
        ("unknown session", "query($s: ID!) { session(id: $s) { id } }", {"s": "ses_x"},
         "NOT_FOUND"),
        ("missing variable", "query($s: ID!) { session(id: $s) { id } }", {}, "BAD_INPUT"),
        ("wrong-typed variable", "query($s: ID!) { session(id: $s) { id } }", {"s": [1]},
         "BAD_INPUT"),
        ("extraMeta not an object",
         "mutation($s: ID!) { updateSession(sessionId: $s, extraMeta: 5) { id } }", {"s": sid},
         "BAD_INPUT"),
        ("too deep", "query($s: ID!) { session(id: $s) { root { " + "children { " * 14
         + "id" + " }" * 14 + " } } }", {"s": sid}, "BAD_INPUT"),
        ("query too long", "query { sessions { nodes { id } } } #" + "x" * 70_000, {},
         "BAD_INPUT"),
    ]
    async with socket(hardened.client) as ws:
        for label, query, variables, code in cases:
            messages = await ws.execute(query, variables)
            first = messages[0]
            errors = first["payload"] if first["type"] == "error" else first["payload"]["errors"]
            assert errors, label
            assert_coded(errors, code)
        surrogate = json.dumps({"id": "s1", "type": "subscribe", "payload": {
            "query": "mutation($s: ID!, $t: String) { updateSession(sessionId: $s, title: $t)"
                     " { id } }", "variables": {"s": sid, "t": "X"}}}).replace('"X"', '"\\ud800"')
        await ws.send_raw(surrogate)
        message = json.loads(await ws.ws.recv())
        errors = message["payload"] if message["type"] == "error" else message["payload"]["errors"]
        assert_coded(errors, "BAD_INPUT")
    async with socket(hardened.client) as ws:
        await ws.send_raw("[" * 100_000 + "]" * 100_000)
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.ws.recv()
        assert closed.value.rcvd.code == 4400


async def test_a_read_after_a_mutation_on_the_same_socket_is_fresh(hardened):
    sid = await new_session(hardened.client)
    read = "query($s: ID!) { session(id: $s) { title } }"
    async with socket(hardened.client) as ws:
        before = await ws.execute(read, {"s": sid})
        await ws.execute("mutation($s: ID!) { updateSession(sessionId: $s, title: \"renamed\")"
                         " { id } }", {"s": sid})
        after = await ws.execute(read, {"s": sid})
    assert before[0]["payload"]["data"]["session"]["title"] == "hostile"
    assert after[0]["payload"]["data"]["session"]["title"] == "renamed"


def _held_open_seconds(url: str, first_bytes: bytes) -> float:
    host, port = url.removeprefix("http://").split(":")
    started = time.monotonic()
    with tcp.create_connection((host, int(port)), timeout=30) as conn:
        conn.sendall(first_bytes)
        while conn.recv(4096):
            pass
    return time.monotonic() - started


async def test_slow_clients_are_disconnected(hardened):
    shapes = [b"",
              b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty",
              b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              b"Content-Length: 1000\r\n\r\n{\"query\": \""]
    held = await asyncio.gather(*(asyncio.to_thread(_held_open_seconds, hardened.url, shape)
                                  for shape in shapes))
    assert all(seconds < 15 for seconds in held), held  # the socket timeout (30 s) never hits
    async with httpx.AsyncClient(timeout=10) as http:
        assert (await http.get(f"{hardened.url}/healthz")).status_code == 200


async def test_websockets_and_subscriptions_are_capped(hardened):
    sid = await new_session(hardened.client)
    async with socket(hardened.client) as first:
        for i in range(SUBSCRIPTIONS_PER_SOCKET):
            await first.ws.send(json.dumps({"id": f"sub{i}", "type": "subscribe", "payload": {
                "query": EVENTS, "variables": {"s": sid}}}))
        await asyncio.sleep(0.3)
        over = await first.execute(EVENTS, {"s": sid})
        assert over[0]["type"] == "error"
        assert_coded(over[0]["payload"], "BAD_INPUT")
        async with socket(hardened.client), socket(hardened.client):
            with pytest.raises(websockets.InvalidStatus):
                async with socket(hardened.client):
                    pass
        async with socket(hardened.client) as again:  # a closed one frees its place
            assert (await again.execute("query { sessions { nodes { id } } }"))[0]["type"] \
                == "next"


async def test_an_oversized_body_is_refused_before_it_is_read(hardened):
    body = json.dumps({"query": "mutation($c: String!) { createSession(title: $c) { id } }",
                       "variables": {"c": "x" * MAX_REQUEST_BYTES}})
    async with httpx.AsyncClient(timeout=60) as http:
        declared = await http.post(f"{hardened.url}/graphql", content=body,
                                   headers={**hardened.client.headers,
                                            "Content-Type": "application/json"})

        async def chunks():
            for start in range(0, len(body), 65536):
                yield body[start:start + 65536].encode()

        streamed = await http.post(f"{hardened.url}/graphql", content=chunks(),
                                   headers={**hardened.client.headers,
                                            "Content-Type": "application/json"})
    for response in (declared, streamed):
        assert response.status_code == 413, response.text[:200]
        assert_coded(response.json()["errors"], "BAD_INPUT")


async def test_an_operation_past_the_timeout_is_cancelled_with_a_code(hardened, stub):
    sid = await new_session(hardened.client)
    send = ("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c)"
            " { reply { content } } }")
    stub.enqueue(reply("warm"))  # the first turn plans its statements: slow, and not the point
    await hardened.client(send, s=sid, c="warm up")
    stub.enqueue(dataclasses.replace(reply("too late"), delay=OPERATION_TIMEOUT + 4))
    async with httpx.AsyncClient(timeout=30) as http:
        slow = asyncio.create_task(hardened.client.errors(
            "mutation($s: ID!) { sendMessage(sessionId: $s, content: \"hello\") { error } }",
            s=sid))
        await asyncio.sleep(0.5)
        assert (await http.get(f"{hardened.url}/healthz")).status_code == 200
    assert_coded(await slow, "TIMEOUT")
    await asyncio.sleep(OPERATION_TIMEOUT + 3)  # the stub finishes its late answer
    stub.enqueue(reply("on time"))
    turn = (await hardened.client(send, s=sid, c="again"))["sendMessage"]
    assert turn["reply"]["content"] == "on time"


async def test_tokenless_mode_answers_only_loopback_names(service):
    async with httpx.AsyncClient(timeout=10) as http:
        for host in ("evil.example", "evil.example:80", "127.0.0.1.evil.example"):
            refused = await http.get(f"{service.url}/healthz", headers={"Host": host})
            assert refused.status_code == 403, host
            assert refused.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
        for host in (f"localhost:{service.port}", f"127.0.0.1:{service.port}", "[::1]",
                     "app.localhost"):
            assert (await http.get(f"{service.url}/healthz", headers={"Host": host})
                    ).status_code == 200, host
    with tcp.create_connection(("127.0.0.1", service.port)) as conn:
        with pytest.raises(websockets.InvalidStatus):
            async with websockets.connect(f"ws://evil.example:{service.port}/graphql",
                                          sock=conn, subprotocols=["graphql-transport-ws"]):
                pass
