"""Where the tests' Neo4j comes from, decided in one place.

1. NEO4J_TEST_URI (+ NEO4J_TEST_USER / NEO4J_TEST_PASSWORD): an existing server;
2. otherwise testcontainers' Neo4jContainer, when a Docker engine answers;
3. otherwise the project's own local launcher (Maven jars, a JVM on loopback).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from service.config import Settings

NEO4J_IMAGE = "neo4j:5.26.31-community"


@dataclass
class Neo4jServer:
    uri: str
    user: str
    password: str
    origin: str
    stop: Callable[[], None] = field(default=lambda: None)


def docker_engine_answers() -> bool:
    try:
        import docker

        client = docker.from_env(timeout=2)
        client.ping()
        return True
    except Exception:
        return False


def from_uri() -> Neo4jServer | None:
    uri = os.environ.get("NEO4J_TEST_URI")
    if not uri:
        return None
    return Neo4jServer(uri, os.environ.get("NEO4J_TEST_USER", "neo4j"),
                       os.environ.get("NEO4J_TEST_PASSWORD", ""), "NEO4J_TEST_URI")


def from_testcontainers() -> Neo4jServer:
    from testcontainers.neo4j import Neo4jContainer

    container = Neo4jContainer(NEO4J_IMAGE)
    container.start()
    return Neo4jServer(container.get_connection_url(), container.username, container.password,
                       f"testcontainers ({NEO4J_IMAGE})", container.stop)


def from_local_launcher(home: Path) -> Neo4jServer:
    from service.neo4j_local import LocalNeo4j, ensure_jars, free_port

    settings = Settings.from_env()
    lib = ensure_jars(settings.cache_dir)
    server = LocalNeo4j(home, free_port(), lib, heap="1g", pagecache_mb=256)
    uri = server.start()
    return Neo4jServer(uri, "neo4j", "", "local launcher (Maven jars, JVM on loopback)", server.stop)


def start_neo4j(scratch: Path) -> Neo4jServer:
    server = from_uri()
    if server is not None:
        return server
    if docker_engine_answers():
        return from_testcontainers()
    return from_local_launcher(scratch / "neo4j-home")
