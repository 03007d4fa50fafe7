"""GraphQL answers as JSON, a large one encoded in a worker thread, over HTTP and websockets.

json.dumps holds the GIL for the whole document it encodes, so moving it to a thread
alone would not free the event loop. An answer is encoded in pieces instead: each object
or list that holds no container in one call (a run of such list items together), the
containers around them piece by piece. Up to ON_LOOP_PIECES pieces or ON_LOOP_CHARS
characters are encoded on the event loop, so a small answer never waits for a thread;
the rest of a larger one is encoded in a worker thread, and between two of its pieces
the interpreter lets the event loop run. Over HTTP the body then goes out a chunk at a
time, so no event-loop step copies more than one chunk of it. The text is strawberry's
own encoding (compact separators, ASCII escapes).
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
SEND_CHUNK = 4 * 1024 * 1024
RUN = 64  # a list's items encoded in one call, when none holds a container,
RUN_CHARS = 16 * 1024  # unless their text adds up to this many characters first

_encode_text = json.encoder.encode_basestring_ascii
if json.encoder.c_make_encoder is not None:  # one C encoder for every piece (CPython)
    _c_encoder = json.encoder.c_make_encoder(
        None, json.JSONEncoder().default, _encode_text, None, ":", ",", False, False, True)

    def _encode(value: Any) -> str:
        return "".join(_c_encoder(value, 0))
else:  # pragma: no cover
    _encode = json.JSONEncoder(separators=(",", ":")).encode


def _flat_size(value: Any) -> int | None:
    """Roughly how long `value` is as JSON when it holds no container; None when it does."""
    kind = type(value)
    if kind is str:
        return len(value)
    if kind is not dict and kind is not list:
        return 8
    size = 0
    for item in value.values() if kind is dict else value:
        if type(item) is dict or type(item) is list:
            return None
        size += len(item) if type(item) is str else 8
    return size


def pieces(value: Any) -> Iterator[str]:
    """`value` as JSON text, in pieces: a value holding no container is one piece, and so
    is a run of such items of a list (up to RUN of them, or RUN_CHARS characters)."""
    if _flat_size(value) is not None:
        yield _encode(value)
    elif type(value) is dict:
        separator = "{"
        for key, item in value.items():
            yield separator + _encode_text(key) + ":"
            separator = ","
            yield from pieces(item)
        yield "}"
    else:
        separator, run, run_size = "[", [], 0
        for item in value:
            size = _flat_size(item)
            if size is not None:
                run.append(item)
                run_size += size
            if run and (size is None or len(run) == RUN or run_size >= RUN_CHARS):
                yield separator + _encode(run)[1:-1]
                separator, run, run_size = ",", [], 0
            if size is None:
                yield separator
                separator = ","
                yield from pieces(item)
        if run:
            yield separator + _encode(run)[1:-1]
        yield "]"


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
    """A JSON response whose body is encoded (json_text) when it is sent, and sent in
    chunks of SEND_CHUNK bytes, each after the connection has taken the one before."""

    media_type = "application/json"

    def __init__(self, content: Any, status_code: int = 200) -> None:
        super().__init__(None, status_code)
        self.content = content

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        text = await json_text(self.content)  # ASCII: as many bytes as characters
        self.headers["content-length"] = str(len(text))
        await send({"type": "http.response.start", "status": self.status_code,
                    "headers": self.raw_headers})
        for start in range(0, max(len(text), 1), SEND_CHUNK):
            await send({"type": "http.response.body",
                        "body": text[start:start + SEND_CHUNK].encode(),
                        "more_body": start + SEND_CHUNK < len(text)})


class OffLoopWebSocketAdapter(ASGIWebSocketAdapter):
    """Sends each websocket message encoded by json_text."""

    async def send_json(self, message: Mapping[str, object]) -> None:
        text = await json_text(message)
        try:
            await self.ws.send_text(text)
        except WebSocketDisconnect as exc:
            raise WebSocketDisconnected from exc
