"""One settings object, read from the environment when asked (never at import)."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

DEFAULT_TENANT = "local"


def _user_dir(env: Mapping[str, str], xdg_var: str, fallback: str) -> Path:
    base = env.get(xdg_var) or str(Path.home() / fallback)
    return Path(base) / "ctxdag"


@dataclass(frozen=True)
class Settings:
    # An existing Neo4j (any 5.x or Aura). None: the managed local Neo4j is used.
    neo4j_uri: str | None
    neo4j_user: str
    neo4j_password: str
    neo4j_database: str | None
    # The managed local Neo4j.
    data_dir: Path
    cache_dir: Path
    local_neo4j_port: int
    local_neo4j_heap: str
    local_neo4j_pagecache_mb: int
    # The ledger.
    tenant: str
    max_content_bytes: int
    max_metadata_bytes: int
    max_call_reads: int
    # The token budget (service/context/budget.py).
    context_window: int
    keep_recent_tokens: int
    auto_compact_ratio: float
    # The API: bearer tokens mapped to tenants (none: single-tenant, loopback only).
    api_tokens: Mapping[str, str]
    # Bounds on clients (service/api/guards.py, server.py, limits.py).
    operation_timeout_seconds: float
    request_read_timeout_seconds: float
    max_request_bytes: int
    max_connections: int
    max_websockets: int
    max_subscriptions_per_socket: int
    # Everything else is passed through for the model provider to read (e.g. ANTHROPIC_*).
    env: Mapping[str, str]

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        env = os.environ if env is None else env
        return cls(
            neo4j_uri=env.get("NEO4J_URI") or None,
            neo4j_user=env.get("NEO4J_USER", "neo4j"),
            neo4j_password=env.get("NEO4J_PASSWORD", ""),
            neo4j_database=env.get("NEO4J_DATABASE") or None,
            data_dir=Path(env["CTXDAG_HOME"]) if env.get("CTXDAG_HOME")
            else _user_dir(env, "XDG_DATA_HOME", ".local/share"),
            cache_dir=Path(env["CTXDAG_CACHE"]) if env.get("CTXDAG_CACHE")
            else _user_dir(env, "XDG_CACHE_HOME", ".cache"),
            local_neo4j_port=int(env.get("CTXDAG_NEO4J_PORT", "7687")),
            local_neo4j_heap=env.get("CTXDAG_NEO4J_HEAP", "1g"),
            local_neo4j_pagecache_mb=int(env.get("CTXDAG_NEO4J_PAGECACHE_MB", "512")),
            tenant=env.get("CTXDAG_TENANT", DEFAULT_TENANT),
            max_content_bytes=int(env.get("CTXDAG_MAX_CONTENT_BYTES", str(1024 * 1024))),
            max_metadata_bytes=int(env.get("CTXDAG_MAX_METADATA_BYTES", str(64 * 1024))),
            max_call_reads=int(env.get("CTXDAG_MAX_CALL_READS", "10000")),
            context_window=int(env.get("CTXDAG_CONTEXT_WINDOW", "200000")),
            keep_recent_tokens=int(env.get("CTXDAG_KEEP_RECENT_TOKENS", "20000")),
            auto_compact_ratio=float(env.get("CTXDAG_AUTO_COMPACT_RATIO", "0.8")),
            api_tokens=_api_tokens(env),
            operation_timeout_seconds=float(env.get("CTXDAG_OPERATION_TIMEOUT_SECONDS", "300")),
            request_read_timeout_seconds=float(
                env.get("CTXDAG_REQUEST_READ_TIMEOUT_SECONDS", "10")),
            max_request_bytes=int(env.get("CTXDAG_MAX_REQUEST_BYTES", str(8 * 1024 * 1024))),
            max_connections=int(env.get("CTXDAG_MAX_CONNECTIONS", "256")),
            max_websockets=int(env.get("CTXDAG_MAX_WEBSOCKETS", "32")),
            max_subscriptions_per_socket=int(
                env.get("CTXDAG_MAX_SUBSCRIPTIONS_PER_SOCKET", "8")),
            env=dict(env),
        )

    @property
    def local_neo4j_home(self) -> Path:
        return self.data_dir / "neo4j"


def _api_tokens(env: Mapping[str, str]) -> dict[str, str]:
    """CTXDAG_API_TOKENS="token=tenant,token2=tenant2" and/or CTXDAG_API_TOKENS_FILE (JSON map)."""
    tokens: dict[str, str] = {}
    path = env.get("CTXDAG_API_TOKENS_FILE")
    if path:
        loaded = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(loaded, dict) or not all(
                isinstance(k, str) and isinstance(v, str) and k and v for k, v in loaded.items()):
            raise ValueError(f"{path} must be a JSON object mapping token strings to tenant ids")
        tokens.update(loaded)
    for pair in filter(None, (p.strip() for p in env.get("CTXDAG_API_TOKENS", "").split(","))):
        token, sep, tenant = pair.partition("=")
        if not sep or not token.strip() or not tenant.strip():
            raise ValueError("CTXDAG_API_TOKENS must look like token=tenant,token2=tenant2")
        tokens[token.strip()] = tenant.strip()
    return tokens
