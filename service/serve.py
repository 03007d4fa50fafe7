"""`ctxdag serve`: the managed Neo4j (unless NEO4J_URI is set), the schema, the HTTP service."""
from __future__ import annotations

import ipaddress
import sys
from typing import Callable

import uvicorn

from .api.app import create_app
from .api.server import server_config
from .config import Settings
from .neo4j_local import detached_status, ensure_jars, start_detached, stop_detached


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _start_managed_neo4j(settings: Settings) -> Callable[[], None]:
    """Starts the managed Neo4j; returns how to stop it."""
    lib = ensure_jars(settings.cache_dir)
    uri = start_detached(settings.local_neo4j_home, settings.local_neo4j_port, lib,
                         heap=settings.local_neo4j_heap,
                         pagecache_mb=settings.local_neo4j_pagecache_mb)
    print(f"Neo4j running at {uri} (data: {settings.local_neo4j_home})", flush=True)

    def stop() -> None:
        stop_detached(settings.local_neo4j_home)
        print("Neo4j stopped.", flush=True)

    return stop


async def serve(settings: Settings, host: str, port: int) -> int:
    if not settings.api_tokens and not is_loopback(host):
        print(f"error: refusing to listen on {host} without API tokens: anyone who can reach "
              "it could read every conversation. Set CTXDAG_API_TOKENS (token=tenant,...) or "
              "CTXDAG_API_TOKENS_FILE, or bind a loopback address.", file=sys.stderr)
        return 2
    stop_neo4j = None
    if not settings.neo4j_uri and detached_status(settings.local_neo4j_home) is None:
        stop_neo4j = _start_managed_neo4j(settings)
    print(f"GraphiQL: http://{host}:{port}/graphql   health: http://{host}:{port}/healthz",
          flush=True)
    app = create_app(settings, on_shutdown=stop_neo4j)
    server = uvicorn.Server(server_config(app, settings, host, port))
    try:
        await server.serve()
    finally:
        if stop_neo4j is not None and not server.started:
            stop_neo4j()  # the app never started, so its shutdown hook will not run
    return 0 if server.started else 1
