"""ctxdag's own GraphiQL page (static/graphiql.html), served to a browser opening /graphql
(`wants_graphiql`), whose scripts and styles the service serves itself under
/graphql/static/ (the vendored files of static/graphiql/, listed in its README.md): it
works offline."""
from __future__ import annotations

import asyncio
import functools
import gzip
import hashlib
import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from .errors import NOSNIFF, error_body

STATIC_DIR = Path(__file__).resolve().parent / "static"
JAVASCRIPT = "text/javascript; charset=utf-8"
# The files GraphiQL's page loads; their names carry their version, so they never change.
GRAPHIQL_ASSETS = {
    "graphiql-3.8.3.min.js": JAVASCRIPT,
    "graphiql-3.8.3.min.css": "text/css; charset=utf-8",
    "react-18.3.1.production.min.js": JAVASCRIPT,
    "react-dom-18.3.1.production.min.js": JAVASCRIPT,
}
ASSET_CACHE_CONTROL = "public, max-age=31536000, immutable"


@dataclass(frozen=True)
class Asset:
    body: bytes
    gzipped: bytes
    media_type: str
    etag: str


@functools.cache
def graphiql_asset(name: str) -> Asset:
    """A vendored file (a name of GRAPHIQL_ASSETS), read and compressed once."""
    body = (STATIC_DIR / "graphiql" / name).read_bytes()
    return Asset(body, gzip.compress(body, mtime=0), GRAPHIQL_ASSETS[name],
                 f'"{hashlib.sha256(body).hexdigest()[:32]}"')


def _accepts(header: str, name: str) -> bool:
    """Whether an Accept or Accept-Encoding header lists `name` itself (not through a
    wildcard), with a quality above 0."""
    for item in header.lower().split(","):
        value, _, params = item.partition(";")
        if value.strip() == name:
            return params.replace(" ", "") not in ("q=0", "q=0.0", "q=0.00", "q=0.000")
    return False


def accepts_gzip(accept_encoding: str) -> bool:
    return _accepts(accept_encoding, "gzip")


def wants_graphiql(method: str, params: Mapping[str, Any], accept: str) -> bool:
    """A browser opening /graphql: a GET that carries no operation (neither `query` nor
    `extensions`, which a persisted query sends alone) and names text/html in Accept.
    `*/*` is not enough: it is what curl and GraphQL clients (Apollo's hashed GETs) send,
    and they read JSON."""
    return (method == "GET" and params.get("query") is None
            and params.get("extensions") is None and _accepts(accept, "text/html"))


async def serve_graphiql_asset(request: Request, name: str) -> Response:
    if name not in GRAPHIQL_ASSETS:
        return JSONResponse(error_body("no GraphiQL asset has this name", "NOT_FOUND"),
                            status_code=404, headers=NOSNIFF)
    asset = await asyncio.to_thread(graphiql_asset, name)
    headers = {"cache-control": ASSET_CACHE_CONTROL, "etag": asset.etag,
               "vary": "Accept-Encoding", "x-content-type-options": "nosniff"}
    if asset.etag in request.headers.get("if-none-match", ""):
        return Response(status_code=304, headers=headers)
    body = asset.body
    if accepts_gzip(request.headers.get("accept-encoding", "")):
        body, headers["content-encoding"] = asset.gzipped, "gzip"
    return Response(body, media_type=asset.media_type, headers=headers)


@functools.cache
def graphiql_template() -> str:
    return (STATIC_DIR / "graphiql.html").read_text(encoding="utf-8")


def graphiql_page(path: str, tokens_required: bool) -> str:
    """The page served at `path`, loading its assets from `path`/static."""
    static = html.escape(path.rstrip("/") + "/static", quote=True)
    return (graphiql_template().replace("{{static}}", static)
            .replace("{{tokens_required}}", "true" if tokens_required else "false"))
