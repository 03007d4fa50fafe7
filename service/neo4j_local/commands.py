"""`ctxdag neo4j up|down|status`: manage the local Neo4j daemon. Each returns an exit code."""
from __future__ import annotations

import sys

from ..config import Settings
from ._util import Neo4jLaunchError
from .jars import NEO4J_VERSION, ensure_jars
from .process import detached_status, start_detached, stop_detached


def _external(settings: Settings) -> bool:
    if settings.neo4j_uri:
        print(
            f"An external Neo4j is configured (NEO4J_URI={settings.neo4j_uri}); "
            "the managed local Neo4j is not used."
        )
        return True
    return False


def up(settings: Settings) -> int:
    if _external(settings):
        return 0
    home = settings.local_neo4j_home
    try:
        lib_dir = ensure_jars(settings.cache_dir, log=print)
        if detached_status(home) is None:
            print(f"Starting Neo4j {NEO4J_VERSION} (data: {home}) ...", flush=True)
        uri = start_detached(
            home,
            settings.local_neo4j_port,
            lib_dir,
            heap=settings.local_neo4j_heap,
            pagecache_mb=settings.local_neo4j_pagecache_mb,
        )
    except Neo4jLaunchError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"Neo4j {NEO4J_VERSION} running at {uri} (data: {home})")
    return 0


def down(settings: Settings) -> int:
    if _external(settings):
        return 0
    try:
        stopped = stop_detached(settings.local_neo4j_home)
    except Neo4jLaunchError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print("Neo4j stopped." if stopped else "Neo4j was not running.")
    return 0


def status(settings: Settings) -> int:
    if settings.neo4j_uri:
        print(f"external Neo4j at {settings.neo4j_uri} (NEO4J_URI)")
        return 0
    state = detached_status(settings.local_neo4j_home)
    if state is None:
        print("not running")
        return 1
    print(
        f"Neo4j {state.get('version', '?')} running at {state['uri']} "
        f"(pid {state['pid']}, since {state.get('started_at', '?')}, "
        f"data: {settings.local_neo4j_home})"
    )
    return 0
