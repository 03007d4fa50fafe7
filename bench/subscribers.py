"""`python -m bench.subscribers --url http://127.0.0.1:8000`: append latency over HTTP with
no subscriber, then with the most subscriptions the service admits (CTXDAG_MAX_WEBSOCKETS
sockets x CTXDAG_MAX_SUBSCRIPTIONS_PER_SOCKET operations) all listening to the session
being written. Run it against a `ctxdag serve` with the default bounds; nothing is asserted.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import time

import httpx
import websockets

from service.config import Settings

APPEND = ("mutation($s: ID!, $c: String!) { appendMessage(sessionId: $s, role: USER,"
          " content: $c) { id } }")
EVENTS = "subscription($s: ID!) { sessionEvents(sessionId: $s) { type } }"


async def appends(http: httpx.AsyncClient, url: str, session_id: str, n: int) -> list[float]:
    times = []
    for i in range(n):
        started = time.perf_counter()
        response = await http.post(f"{url}/graphql", json={
            "query": APPEND, "variables": {"s": session_id, "c": f"turn {i}"}})
        assert not response.json().get("errors"), response.text
        times.append(time.perf_counter() - started)
    return times


async def listen(url: str, session_id: str, subscriptions: int, received: list[int],
                 ready: asyncio.Event, stop: asyncio.Event) -> None:
    async with websockets.connect(url.replace("http://", "ws://") + "/graphql",
                                  subprotocols=["graphql-transport-ws"]) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        await ws.recv()
        for i in range(subscriptions):
            await ws.send(json.dumps({"id": str(i), "type": "subscribe", "payload": {
                "query": EVENTS, "variables": {"s": session_id}}}))
        ready.set()
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    if json.loads(await ws.recv())["type"] == "next":
                        received[0] += 1


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    return (f"p50 {statistics.median(ordered) * 1000:6.1f} ms  "
            f"p95 {ordered[int(len(ordered) * 0.95)] * 1000:6.1f} ms")


async def main(url: str, n: int) -> None:
    settings = Settings.from_env()
    sockets, per_socket = settings.max_websockets, settings.max_subscriptions_per_socket
    async with httpx.AsyncClient(timeout=60) as http:
        session_id = (await http.post(f"{url}/graphql", json={
            "query": "mutation { createSession(title: \"bench\") { id } }"})
        ).json()["data"]["createSession"]["id"]
        await appends(http, url, session_id, 10)
        alone = await appends(http, url, session_id, n)
        received, stop = [0], asyncio.Event()
        readies = [asyncio.Event() for _ in range(sockets)]
        listeners = [asyncio.create_task(listen(url, session_id, per_socket, received,
                                                ready, stop)) for ready in readies]
        await asyncio.gather(*(ready.wait() for ready in readies))
        await asyncio.sleep(1)
        crowded = await appends(http, url, session_id, n)
        await asyncio.sleep(2)
        stop.set()
        await asyncio.gather(*listeners)
    print(f"append, no subscriber:            {summary(alone)}")
    print(f"append, {sockets} sockets x {per_socket} subscriptions: {summary(crowded)}  "
          f"({received[0]} events delivered, {2 * n * sockets * per_socket} expected)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("-n", type=int, default=100)
    args = parser.parse_args()
    asyncio.run(main(args.url, args.n))
