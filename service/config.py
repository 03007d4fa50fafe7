"""The one settings object, and the only code that reads the environment.

`Settings.from_env()` reads every variable once, when asked (never at import), and
refuses a malformed or out-of-range value with a `ConfigurationError` naming the
variable. An empty variable counts as unset. The rest of ctxdag receives the parsed
`Settings` (and its `anthropic` part) and reads no environment itself.

Two rules are decided here and nowhere else:

- the context window the token budget uses is CTXDAG_CONTEXT_WINDOW when it is set,
  otherwise the configured provider's window (CTXDAG_ANTHROPIC_CONTEXT_WINDOW, default
  200,000, with Anthropic; 200,000 for the offline model) — an explicit setting is
  never overridden;
- the summary model is CTXDAG_ANTHROPIC_SUMMARY_MODEL when set, otherwise the chat
  model (`AnthropicSettings.__post_init__`).
"""
from __future__ import annotations

import base64
import binascii
import ipaddress
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, TypeVar
from urllib.parse import urlsplit

from .errors import ConfigurationError

DEFAULT_TENANT = "local"
DEFAULT_CONTEXT_WINDOW = 200_000  # tokens; the offline model's window

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"
DEFAULT_ANTHROPIC_MAX_TOKENS = 4096
DEFAULT_ANTHROPIC_CONTEXT_WINDOW = 200_000
DEFAULT_ANTHROPIC_TIMEOUT = 120.0  # seconds, per attempt
DEFAULT_ANTHROPIC_MAX_RETRIES = 2
# Prompt caching: the lifetimes Anthropic's cache_control takes; the API's default first.
CACHE_TTLS = ("5m", "1h")
DEFAULT_CACHE_TTL = CACHE_TTLS[0]
DEFAULT_RECALL_BUDGET = 4000  # tokens a history_expand page holds at most
# How long a turn draft (beginTurn) waits for its completeTurn, in seconds, and the most a
# beginTurn may ask for (docs/guides/agent-runtimes.md, "Bring your own model").
DEFAULT_DRAFT_TTL = 1800
MAX_DRAFT_TTL = 24 * 3600

Number = TypeVar("Number", int, float)


@dataclass(frozen=True)
class AnthropicSettings:
    """The Anthropic provider's part of the settings (service/llm/ receives it)."""

    api_key: str
    base_url: str | None = None  # None: the SDK's default (https://api.anthropic.com)
    model: str = DEFAULT_ANTHROPIC_MODEL
    summary_model: str | None = None  # None: `model` (set in __post_init__, the one place)
    max_tokens: int = DEFAULT_ANTHROPIC_MAX_TOKENS
    context_window: int = DEFAULT_ANTHROPIC_CONTEXT_WINDOW
    timeout: float = DEFAULT_ANTHROPIC_TIMEOUT  # seconds, per attempt
    max_retries: int = DEFAULT_ANTHROPIC_MAX_RETRIES

    def __post_init__(self) -> None:
        if self.summary_model is None:
            object.__setattr__(self, "summary_model", self.model)

    def __repr__(self) -> str:  # the key never reaches a log line
        return (f"AnthropicSettings(api_key='***', base_url={self.base_url!r}, "
                f"model={self.model!r}, summary_model={self.summary_model!r}, "
                f"max_tokens={self.max_tokens}, context_window={self.context_window}, "
                f"timeout={self.timeout}, max_retries={self.max_retries})")


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
    max_media_bytes: int
    max_call_reads: int
    # Session events (service/events.py): each session's newest kept for replay, and how
    # often a process with subscribers reads the events other processes wrote.
    event_retention: int
    event_poll_seconds: float
    # The token budget (service/context/budget.py); `context_window` is already decided
    # (see the module docstring).
    context_window: int
    keep_recent_tokens: int
    auto_compact_ratio: float
    # Segmented: the stand-ins' share of the window past which the oldest are merged.
    segment_merge_share: float
    # The model provider: Anthropic when ANTHROPIC_API_KEY is set, else None (offline).
    anthropic: AnthropicSettings | None
    # The API: bearer tokens mapped to tenants (none: single-tenant, loopback only). Never
    # in the repr: a logged Settings must not hand out the tokens.
    api_tokens: Mapping[str, str] = field(repr=False)
    # Those of them that may also redact (CTXDAG_REDACT_TOKENS; docs/guides/redaction.md).
    redact_tokens: Mapping[str, str] = field(repr=False)
    # Bounds on clients (service/api/guards.py, server.py, limits.py).
    operation_timeout_seconds: float
    request_read_timeout_seconds: float
    max_request_bytes: int
    max_connections: int
    max_websockets: int
    max_subscriptions_per_socket: int
    max_query_cost: int  # values an operation's answer may hold, estimated (api/cost.py)
    # Browser pages on these origins may call the API (CORS) and open websockets
    # (service/api/guards.py): exact origins, normalized by `normalize_origin`.
    cors_origins: tuple[str, ...] = ()
    # Bookmarks handed to clients (service/api/bookmark_seal.py) are sealed with the first
    # key and opened with any (none: a random key per process); and how long a statement
    # waits for the server it runs on to reach a client's bookmarks.
    bookmark_keys: tuple[bytes, ...] = field(default=(), repr=False)
    bookmark_wait_seconds: float = 10.0
    # The lifetime of the cache breakpoints every Anthropic request marks (README,
    # "Prompt caching"): "5m" (writes at 1.25x the input price) or "1h" (2x).
    cache_ttl: str = DEFAULT_CACHE_TTL
    # The tokens a history_expand page holds at most (docs/guides/recall.md).
    recall_budget_tokens: int = DEFAULT_RECALL_BUDGET
    # How long a turn draft waits for its completion, unless beginTurn names its own.
    draft_ttl_seconds: int = DEFAULT_DRAFT_TTL
    # OpenTelemetry export (docs/guides/telemetry.md): the OTLP/HTTP collector's base URL
    # (OTEL_EXPORTER_OTLP_ENDPOINT; None: no export), and whether spans carry the prompt
    # and reply texts (CTXDAG_OTEL_CAPTURE_MESSAGES; off: they may hold what users said).
    otel_endpoint: str | None = None
    otel_capture_messages: bool = False
    # Where Claude Code, Pi and Codex keep their sessions on this machine, whether or not
    # they are there: what `ctxdag import-transcript` without a PATH walks.
    tool_session_folders: tuple[Path, ...] = ()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "Settings":
        """The settings in `env` (default: the process environment).

        A malformed or out-of-range value is a `ConfigurationError` naming the variable.
        """
        env = os.environ if env is None else env
        anthropic = _anthropic(env)
        explicit_window = _integer(env, "CTXDAG_CONTEXT_WINDOW", None, 1)
        if explicit_window is not None:
            context_window, window_from = explicit_window, "CTXDAG_CONTEXT_WINDOW"
        elif anthropic is not None:
            context_window = anthropic.context_window
            window_from = "CTXDAG_ANTHROPIC_CONTEXT_WINDOW"
        else:
            context_window, window_from = DEFAULT_CONTEXT_WINDOW, "the default"
        keep_recent_tokens = _integer(env, "CTXDAG_KEEP_RECENT_TOKENS", 20_000, 0)
        redact_tokens = _redact_tokens(env, _api_tokens(env))
        auto_compact_ratio = _float(env, "CTXDAG_AUTO_COMPACT_RATIO", 0.8, 0, 1,
                                    exclusive_minimum=True)
        compact_at = int(context_window * auto_compact_ratio)
        if keep_recent_tokens >= compact_at:
            raise ConfigurationError(
                f"CTXDAG_KEEP_RECENT_TOKENS ({keep_recent_tokens}) must be below the automatic "
                f"compaction point, {compact_at} tokens (CTXDAG_AUTO_COMPACT_RATIO "
                f"{auto_compact_ratio:g} of the context window {context_window} from "
                f"{window_from}), or compaction could never make room",
                variable="CTXDAG_KEEP_RECENT_TOKENS")
        return cls(
            neo4j_uri=_text(env, "NEO4J_URI"),
            neo4j_user=_text(env, "NEO4J_USER") or "neo4j",
            neo4j_password=env.get("NEO4J_PASSWORD") or "",
            neo4j_database=_text(env, "NEO4J_DATABASE"),
            data_dir=_user_dir(env, "CTXDAG_HOME", "XDG_DATA_HOME", ".local/share"),
            cache_dir=_user_dir(env, "CTXDAG_CACHE", "XDG_CACHE_HOME", ".cache"),
            local_neo4j_port=_integer(env, "CTXDAG_NEO4J_PORT", 7687, 1, 65535),
            local_neo4j_heap=_text(env, "CTXDAG_NEO4J_HEAP") or "1g",
            local_neo4j_pagecache_mb=_integer(env, "CTXDAG_NEO4J_PAGECACHE_MB", 512, 1),
            tenant=_text(env, "CTXDAG_TENANT") or DEFAULT_TENANT,
            max_content_bytes=_integer(env, "CTXDAG_MAX_CONTENT_BYTES", 1024 * 1024, 1),
            max_metadata_bytes=_integer(env, "CTXDAG_MAX_METADATA_BYTES", 64 * 1024, 1),
            max_media_bytes=_integer(env, "CTXDAG_MAX_MEDIA_BYTES", 5 * 1024 * 1024, 1),
            max_call_reads=_integer(env, "CTXDAG_MAX_CALL_READS", 10_000, 1),
            event_retention=_integer(env, "CTXDAG_EVENT_RETENTION", 10_000, 1),
            event_poll_seconds=_float(env, "CTXDAG_EVENT_POLL_SECONDS", 0.2, 0,
                                      exclusive_minimum=True),
            context_window=context_window,
            keep_recent_tokens=keep_recent_tokens,
            auto_compact_ratio=auto_compact_ratio,
            segment_merge_share=_float(env, "CTXDAG_SEGMENT_MERGE_SHARE", 0.25, 0, 1,
                                       exclusive_minimum=True),
            anthropic=anthropic,
            api_tokens={**_api_tokens(env), **redact_tokens},
            redact_tokens=redact_tokens,
            recall_budget_tokens=_integer(env, "CTXDAG_RECALL_BUDGET", DEFAULT_RECALL_BUDGET, 1),
            draft_ttl_seconds=_integer(env, "CTXDAG_DRAFT_TTL_SECONDS", DEFAULT_DRAFT_TTL, 1,
                                       MAX_DRAFT_TTL),
            operation_timeout_seconds=_float(env, "CTXDAG_OPERATION_TIMEOUT_SECONDS", 300.0, 0,
                                             exclusive_minimum=True),
            request_read_timeout_seconds=_float(env, "CTXDAG_REQUEST_READ_TIMEOUT_SECONDS", 10.0,
                                                0, exclusive_minimum=True),
            max_request_bytes=_integer(env, "CTXDAG_MAX_REQUEST_BYTES", 8 * 1024 * 1024, 1),
            max_connections=_integer(env, "CTXDAG_MAX_CONNECTIONS", 256, 1),
            max_websockets=_integer(env, "CTXDAG_MAX_WEBSOCKETS", 32, 1),
            max_subscriptions_per_socket=_integer(env, "CTXDAG_MAX_SUBSCRIPTIONS_PER_SOCKET", 8,
                                                  1),
            max_query_cost=_integer(env, "CTXDAG_MAX_QUERY_COST", 100_000, 1),
            cors_origins=_cors_origins(env),
            bookmark_keys=_bookmark_keys(env),
            bookmark_wait_seconds=_float(env, "CTXDAG_BOOKMARK_WAIT_SECONDS", 10.0, 0,
                                         exclusive_minimum=True),
            cache_ttl=_choice(env, "CTXDAG_CACHE_TTL", CACHE_TTLS),
            otel_endpoint=_text(env, "OTEL_EXPORTER_OTLP_ENDPOINT"),
            otel_capture_messages=_choice(env, "CTXDAG_OTEL_CAPTURE_MESSAGES",
                                          ("false", "true")) == "true",
            tool_session_folders=_tool_session_folders(env),
        )

    @property
    def local_neo4j_home(self) -> Path:
        return self.data_dir / "neo4j"


def _anthropic(env: Mapping[str, str]) -> AnthropicSettings | None:
    """The Anthropic part; None when ANTHROPIC_API_KEY is unset or empty."""
    api_key = _text(env, "ANTHROPIC_API_KEY")
    if api_key is None:
        return None
    return AnthropicSettings(
        api_key=api_key,
        base_url=_text(env, "ANTHROPIC_BASE_URL"),
        model=_text(env, "CTXDAG_ANTHROPIC_MODEL") or DEFAULT_ANTHROPIC_MODEL,
        summary_model=_text(env, "CTXDAG_ANTHROPIC_SUMMARY_MODEL"),
        max_tokens=_integer(env, "CTXDAG_ANTHROPIC_MAX_TOKENS", DEFAULT_ANTHROPIC_MAX_TOKENS, 1),
        context_window=_integer(env, "CTXDAG_ANTHROPIC_CONTEXT_WINDOW",
                                DEFAULT_ANTHROPIC_CONTEXT_WINDOW, 1),
        timeout=_float(env, "CTXDAG_ANTHROPIC_TIMEOUT", DEFAULT_ANTHROPIC_TIMEOUT, 0.001),
        max_retries=_integer(env, "CTXDAG_ANTHROPIC_MAX_RETRIES",
                             DEFAULT_ANTHROPIC_MAX_RETRIES, 0),
    )


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (the first when unset)."""
    raw = _text(env, name)
    if raw is None:
        return choices[0]
    if raw not in choices:
        raise ConfigurationError(f"{name} must be one of {', '.join(choices)}, got {raw!r}",
                                 variable=name)
    return raw


def _text(env: Mapping[str, str], name: str) -> str | None:
    """The variable, stripped; None when unset or blank."""
    value = (env.get(name) or "").strip()
    return value or None


def _user_dir(env: Mapping[str, str], name: str, xdg_var: str, fallback: str) -> Path:
    explicit = _text(env, name)
    if explicit is not None:
        return Path(explicit)
    return Path(_text(env, xdg_var) or str(Path.home() / fallback)) / "ctxdag"


def _tool_session_folders(env: Mapping[str, str]) -> tuple[Path, ...]:
    """Claude Code's projects (in $CLAUDE_CONFIG_DIR, else ~/.claude), Pi's sessions (in
    $PI_CODING_AGENT_DIR, else ~/.pi/agent), Codex's sessions and archived sessions (in
    $CODEX_HOME, else ~/.codex): each tool's variable read as the tool reads it."""
    home = Path(_text(env, "HOME") or Path.home())

    def where(name: str, default: str) -> Path:
        explicit = _text(env, name)
        return Path(explicit).expanduser() if explicit is not None else home / default

    codex = where("CODEX_HOME", ".codex")
    return (where("CLAUDE_CONFIG_DIR", ".claude") / "projects",
            where("PI_CODING_AGENT_DIR", ".pi/agent") / "sessions",
            codex / "sessions", codex / "archived_sessions")


def _integer(env: Mapping[str, str], name: str, default: int | None, minimum: int,
             maximum: int | None = None) -> int | None:
    raw = _text(env, name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or value < minimum or (maximum is not None and value > maximum):
        span = f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"
        raise ConfigurationError(f"{name} must be an integer {span}, got {raw!r}",
                                 variable=name)
    return value


def _float(env: Mapping[str, str], name: str, default: float, minimum: float,
           maximum: float | None = None, *, exclusive_minimum: bool = False) -> float:
    raw = _text(env, name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    too_small = value <= minimum if exclusive_minimum else value < minimum
    if not math.isfinite(value) or too_small or (maximum is not None and value > maximum):
        low = f"above {minimum:g}" if exclusive_minimum else f"of at least {minimum:g}"
        span = low + (f" and at most {maximum:g}" if maximum is not None else "")
        raise ConfigurationError(f"{name} must be a number {span}, got {raw!r}", variable=name)
    return value


_DEFAULT_PORTS = {"http": 80, "https": 443}
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
_HOST_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*")


def normalize_origin(text: str) -> str | None:
    """`text` as a browser sends it in an Origin header — scheme://host[:port], lowercase,
    without the scheme's default port — or None when it is not an http(s) origin (a path,
    query, user, wildcard or malformed host; "null"). A lone trailing "/" is dropped."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = parts.hostname  # lowercased, IPv6 without brackets
    if (scheme not in _DEFAULT_PORTS or not host or parts.username is not None
            or parts.path not in ("", "/") or parts.query or parts.fragment
            or "?" in text or "#" in text):
        return None
    if ":" in host:
        try:
            host = f"[{ipaddress.IPv6Address(host).compressed}]"
        except ValueError:
            return None
    elif not _HOST_NAME.fullmatch(host):
        return None
    return f"{scheme}://{host}" + ("" if port in (None, _DEFAULT_PORTS[scheme]) else f":{port}")


def _cors_origins(env: Mapping[str, str]) -> tuple[str, ...]:
    """CTXDAG_CORS_ORIGINS="http://localhost:5173,https://app.example.com": exact origins."""
    name = "CTXDAG_CORS_ORIGINS"
    origins: list[str] = []
    for entry in filter(None, (e.strip() for e in env.get(name, "").split(","))):
        if "*" in entry:
            raise ConfigurationError(
                f"{name} must name each origin it allows; a wildcard ({entry!r}) is refused: "
                "it would let every web page a user opens read the API's answers (in "
                "loopback mode, which needs no token, every conversation)", variable=name)
        origin = normalize_origin(entry)
        if origin is None:
            raise ConfigurationError(
                f"{name} must be a comma-separated list of origins like "
                "http://localhost:5173 or https://app.example.com (http or https, a host, "
                f"an optional port, no path), got {entry!r}", variable=name)
        if origin not in origins:
            origins.append(origin)
    return tuple(origins)


BOOKMARK_KEY_BYTES = 32
_HEX_KEY = re.compile(rf"[0-9a-fA-F]{{{2 * BOOKMARK_KEY_BYTES}}}")


def _bookmark_keys(env: Mapping[str, str]) -> tuple[bytes, ...]:
    """CTXDAG_BOOKMARK_KEY="<new>,<old>": 32-byte keys, each in hex (64 digits) or base64
    (standard or URL-safe, padding optional); the first seals. A key is never echoed."""
    name = "CTXDAG_BOOKMARK_KEY"
    keys: list[bytes] = []
    entries = [e.strip() for e in env.get(name, "").split(",")]
    for position, entry in enumerate(filter(None, entries), start=1):
        key = _key_bytes(entry)
        if key is None:
            raise ConfigurationError(
                f"{name} must be {BOOKMARK_KEY_BYTES}-byte keys, each as 64 hex digits or in "
                f"base64, separated by commas (e.g. from `openssl rand -base64 32`); key "
                f"{position} is {len(entry)} characters that do not decode to "
                f"{BOOKMARK_KEY_BYTES} bytes", variable=name)
        if key not in keys:
            keys.append(key)
    return tuple(keys)


def _key_bytes(text: str) -> bytes | None:
    if _HEX_KEY.fullmatch(text):
        return bytes.fromhex(text)
    try:
        key = base64.b64decode(text.replace("-", "+").replace("_", "/") + "=" * (-len(text) % 4),
                               validate=True)
    except (binascii.Error, ValueError):
        return None
    return key if len(key) == BOOKMARK_KEY_BYTES else None


def _api_tokens(env: Mapping[str, str]) -> dict[str, str]:
    """CTXDAG_API_TOKENS="token=tenant,token2=tenant2" and/or CTXDAG_API_TOKENS_FILE (JSON map)."""
    tokens: dict[str, str] = {}
    path = _text(env, "CTXDAG_API_TOKENS_FILE")
    if path:
        tokens.update(_tokens_file(path))
    for pair in filter(None, (p.strip() for p in env.get("CTXDAG_API_TOKENS", "").split(","))):
        token, sep, tenant = pair.partition("=")
        if not sep or not token.strip() or not tenant.strip():
            raise ConfigurationError(
                "CTXDAG_API_TOKENS must look like token=tenant,token2=tenant2 "
                "(an entry has no token or no tenant)", variable="CTXDAG_API_TOKENS")
        tokens[token.strip()] = tenant.strip()
    return tokens


def _redact_tokens(env: Mapping[str, str], api_tokens: Mapping[str, str]) -> dict[str, str]:
    """CTXDAG_REDACT_TOKENS="token=tenant,…": tokens that may do what API tokens do and
    redact too. A token listed in both must name the same tenant there."""
    name = "CTXDAG_REDACT_TOKENS"
    tokens: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in env.get(name, "").split(","))):
        token, sep, tenant = (part.strip() for part in pair.partition("="))
        if not sep or not token or not tenant:
            raise ConfigurationError(f"{name} must look like token=tenant,token2=tenant2 "
                                     "(an entry has no token or no tenant)", variable=name)
        if api_tokens.get(token, tenant) != tenant:
            raise ConfigurationError(f"{name}: a token is given another tenant than in "
                                     "CTXDAG_API_TOKENS", variable=name)
        tokens[token] = tenant
    return tokens


def _tokens_file(path: str) -> dict[str, str]:
    name = "CTXDAG_API_TOKENS_FILE"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigurationError(f"{name}: cannot read {path}: {e.strerror or e}",
                                 variable=name) from None
    except UnicodeDecodeError as e:
        raise ConfigurationError(f"{name}: {path} is not UTF-8 text (invalid byte at offset "
                                 f"{e.start})", variable=name) from None
    try:
        loaded = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise ConfigurationError(f"{name}: {path} is not valid JSON: {e}",
                                 variable=name) from None
    if not isinstance(loaded, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and k and v for k, v in loaded.items()):
        raise ConfigurationError(f"{name}: {path} must be a JSON object mapping token strings "
                                 "to tenant ids", variable=name)
    return loaded
