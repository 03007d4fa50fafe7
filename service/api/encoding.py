"""GraphQL answers as JSON, a large one encoded in a worker thread, over HTTP and websockets.

json.dumps holds the GIL for the whole document it encodes, so moving it to a thread
alone would not free the event loop. An answer is encoded in pieces instead: each object
or list whose values are all scalars in one call, the containers around them piece by
piece. Up to ON_LOOP_PIECES pieces or ON_LOOP_CHARS characters are encoded on the event
loop, so a small answer never waits for a thread; the rest of a larger one is encoded in
a worker thread, and between two of its pieces the interpreter lets the event loop run.
The text is strawberry's own encoding (compact separators, ASCII escapes).
"""
from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any, Iterator, Mapping

from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocketDisconnect
from strawberry.asgi import ASGIWebSocketAdapter
from strawberry.http.exceptions import WebSocketDisconnected

ON_LOOP_PIECES = 256
ON_LOOP_CHARS = 64 * 1024
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def pieces(value: Any) -> Iterator[str]:
    """`value` as JSON text, in pieces."""
    if isinstance(value, dict) and any(isinstance(v, (dict, list)) for v in value.values()):
        yield "{"
        for i, (key, item) in enumerate(value.items()):
            yield ("," if i else "") + _ENCODER.encode(key) + ":"
            yield from pieces(item)
        yield "}"
    elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        yield "["
        for i, item in enumerate(value):
            if i:
                yield ","
            yield from pieces(item)
        yield "]"
    else:
        yield _ENCODER.encode(value)


async def json_text(value: Any) -> str:
    chunks = pieces(value)
    head: list[str] = []
    size = 0
    for piece in chunks:
        head.append(piece)
        size += len(piece)
        if len(head) >= ON_LOOP_PIECES or size >= ON_LOOP_CHARS:
            return await asyncio.to_thread("".join, itertools.chain(head, chunks))
    return "".join(head)


class OffLoopJSONResponse(Response):
    """A JSON response whose body is encoded (json_text) when it is sent."""

    media_type = "application/json"

    def __init__(self, content: Any, status_code: int = 200) -> None:
        super().__init__(None, status_code)
        self.content = content

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.body = (await json_text(self.content)).encode()
        self.headers["content-length"] = str(len(self.body))
        await super().__call__(scope, receive, send)


class OffLoopWebSocketAdapter(ASGIWebSocketAdapter):
    """Sends each websocket message encoded by json_text."""

    async def send_json(self, message: Mapping[str, object]) -> None:
        text = await json_text(message)
        try:
            await self.ws.send_text(text)
        except WebSocketDisconnect as exc:
            raise WebSocketDisconnected from exc
