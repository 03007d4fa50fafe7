"""A small GraphQL client for the tests: plain HTTP and graphql-transport-ws, no magic."""
from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from dataclasses import dataclass
from typing import Any, AsyncIterator

import httpx
import websockets


class GraphQLErrors(AssertionError):
    def __init__(self, errors: list[dict]) -> None:
        super().__init__(json.dumps(errors, indent=1))
        self.errors = errors

    @property
    def codes(self) -> list[str]:
        return [e.get("extensions", {}).get("code") for e in self.errors]


@dataclass
class Client:
    base_url: str
    token: str | None = None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def post(self, query: str, variables: dict | None = None) -> dict:
        """The raw response body of one GraphQL request."""
        async with httpx.AsyncClient(timeout=60) as http:
            response = await http.post(f"{self.base_url}/graphql", headers=self.headers,
                                       json={"query": query, "variables": variables or {}})
        return response.json()

    async def __call__(self, query: str, **variables: Any) -> dict:
        """`data`, or GraphQLErrors when the response has errors."""
        body = await self.post(query, variables)
        if body.get("errors"):
            raise GraphQLErrors(body["errors"])
        return body["data"]

    async def errors(self, query: str, **variables: Any) -> list[dict]:
        body = await self.post(query, variables)
        assert body.get("errors"), f"expected errors, got {body}"
        return body["errors"]

    async def subscribe(self, query: str, variables: dict, count: int,
                        ready: asyncio.Event | None = None, timeout: float = 30) -> list[dict]:
        """Opens a graphql-transport-ws subscription and returns its first `count` payloads."""
        url = self.base_url.replace("http://", "ws://") + "/graphql"
        async with websockets.connect(url, subprotocols=["graphql-transport-ws"],
                                      additional_headers=self.headers) as ws:
            await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
            assert json.loads(await ws.recv())["type"] == "connection_ack"
            op = str(uuid.uuid4())
            await ws.send(json.dumps({"id": op, "type": "subscribe",
                                      "payload": {"query": query, "variables": variables}}))
            if ready is not None:
                await asyncio.sleep(0.3)  # the server has registered the subscription
                ready.set()
            received = []
            async with asyncio.timeout(timeout):
                while len(received) < count:
                    message = json.loads(await ws.recv())
                    if message["type"] == "next":
                        received.append(message["payload"])
                    elif message["type"] in ("error", "complete"):
                        received.append(message)
                        break
            return received


class Socket:
    """One graphql-transport-ws connection running operations one after another."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws

    async def send_raw(self, text: str) -> None:
        await self.ws.send(text)

    async def execute(self, query: str, variables: dict | None = None,
                      timeout: float = 30) -> list[dict]:
        """Every message of one operation up to its `complete` or `error`."""
        op = str(uuid.uuid4())
        await self.ws.send(json.dumps({"id": op, "type": "subscribe", "payload": {
            "query": query, "variables": variables or {}}}))
        messages = []
        async with asyncio.timeout(timeout):
            while True:
                message = json.loads(await self.ws.recv())
                if message.get("id") != op:
                    continue
                messages.append(message)
                if message["type"] in ("complete", "error"):
                    return messages


@contextlib.asynccontextmanager
async def socket(client: Client) -> AsyncIterator[Socket]:
    url = client.base_url.replace("http://", "ws://") + "/graphql"
    async with websockets.connect(url, subprotocols=["graphql-transport-ws"],
                                  additional_headers=client.headers,
                                  max_size=None) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        assert json.loads(await ws.recv())["type"] == "connection_ack"
        yield Socket(ws)
