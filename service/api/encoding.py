"""GraphQL answers as JSON, a large one encoded in a worker thread, over HTTP and websockets.

json.dumps holds the GIL for the whole document it encodes, so moving it to a thread
alone would not free the event loop. An answer is encoded in pieces instead: runs of
shallow values (a row and its metadata, a list of ids) in one call each, the containers
around them piece by piece. Up to ON_LOOP_PIECES pieces or ON_LOOP_CHARS characters are
encoded on the event loop, so a small answer never waits for a thread;
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
SHALLOW = 2  # levels of containers a value may nest and still join a run
RUN = 64  # values in a run, encoded in one call
RUN_CHARS = 16 * 1024  # or fewer values, when their text reaches this many characters

_encode_text = json.encoder.encode_basestring_ascii
if json.encoder.c_make_encoder is not None:  # one C encoder for every piece (CPython)
    _c_encoder = json.encoder.c_make_encoder(
        None, json.JSONEncoder().default, _encode_text, None, ":", ",", False, False, True)

    def _encode(value: Any) -> str:
        return "".join(_c_encoder(value, 0))
else:  # pragma: no cover
    _encode = json.JSONEncoder(separators=(",", ":")).encode


def _size(value: Any, depth: int = SHALLOW) -> int | None:
    """Roughly how long `value` is as JSON when it nests at most `depth` containers; None
    when it nests more."""
    kind = type(value)
    if kind is str:
        return len(value)
    if kind is not dict and kind is not list:
        return 8
    if depth == 0:
        return None
    size = 0
    for item in value.values() if kind is dict else value:
        inner = type(item)
        if inner is dict or inner is list:
            nested = _size(item, depth - 1)
            if nested is None:
                return None
            size += nested
        else:
            size += len(item) if inner is str else 8
    return size


def _batchable(value: Any) -> int | None:
    """The size of a value small and shallow enough to be encoded with others in one call."""
    size = _size(value)
    return size if size is not None and size <= RUN_CHARS else None


def pieces(value: Any) -> Iterator[str]:
    """`value` as JSON text, in pieces: a run of small values nesting at most SHALLOW
    containers (entries of an object or items of a list, up to RUN of them or RUN_CHARS
    characters) is one piece, and so is a scalar however long."""
    if _batchable(value) is not None or (type(value) is not dict and type(value) is not list):
        yield _encode(value)
        return
    is_object = type(value) is dict
    entries = value.items() if is_object else ((None, item) for item in value)
    separator, run, run_size = "{" if is_object else "[", {} if is_object else [], 0
    for key, item in entries:
        size = _batchable(item)
        if size is not None:
            if is_object:
                run[key] = item
            else:
                run.append(item)
            run_size += size
        if run and (size is None or len(run) == RUN or run_size >= RUN_CHARS):
            yield separator + _encode(run)[1:-1]
            separator, run, run_size = ",", {} if is_object else [], 0
        if size is None:
            yield separator + (_encode_text(key) + ":" if is_object else "")
            separator = ","
            yield from pieces(item)
    if run:
        yield separator + _encode(run)[1:-1]
    yield "}" if is_object else "]"


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
