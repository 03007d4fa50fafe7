"""A real Neo4j Community, fetched with Maven and run as a local JVM (no Docker)."""
from ._util import Neo4jLaunchError
from .jars import NEO4J_VERSION, ensure_jars
from .process import LocalNeo4j, detached_status, free_port, start_detached, stop_detached

__all__ = [
    "NEO4J_VERSION",
    "LocalNeo4j",
    "Neo4jLaunchError",
    "detached_status",
    "ensure_jars",
    "free_port",
    "start_detached",
    "stop_detached",
]
