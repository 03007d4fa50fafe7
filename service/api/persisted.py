"""Automatic persisted queries, Apollo's protocol over HTTP.

A client may send only a query's SHA-256 (`extensions.persistedQuery = {version: 1,
sha256Hash}`). A hash its tenant's earlier requests registered runs its query; an unknown
one is answered `PERSISTED_QUERY_NOT_FOUND` (HTTP 200), and the client sends hash and
query together: the hash is checked against the query, and the query is remembered.

Each tenant has a cache of its own, so whether a hash is known never tells one tenant
that another sent that text; a request without a tenant (no valid token) runs the query
it sends and remembers nothing. Per process and bounded per tenant (least recently used
go first): another replica, a restart or an eviction only costs the client that second
request.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from cross_web import HTTPException

NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND"
# Per tenant; a query is at most limits.MAX_QUERY_CHARS long.
CAPACITY = 1_000
CAPACITY_CHARS = 4 * 1024 * 1024


class PersistedQueryRefused(HTTPException):
    """A persisted-query request that does not run, with the code the client reads."""

    def __init__(self, status_code: int, reason: str, code: str) -> None:
        super().__init__(status_code, reason)
        self.code = code


@dataclass
class TenantQueries:
    """One tenant's queries by hash, least recently used first."""

    queries: OrderedDict[str, str] = field(default_factory=OrderedDict)
    chars: int = 0

    def get(self, digest: str) -> str | None:
        query = self.queries.get(digest)
        if query is not None:
            self.queries.move_to_end(digest)
        return query

    def put(self, digest: str, query: str, capacity: int, capacity_chars: int) -> None:
        self.chars += len(query) - len(self.queries.pop(digest, ""))
        self.queries[digest] = query
        while len(self.queries) > capacity or self.chars > capacity_chars:
            self.chars -= len(self.queries.popitem(last=False)[1])


class PersistedQueries:
    def __init__(self, capacity: int = CAPACITY, capacity_chars: int = CAPACITY_CHARS) -> None:
        self.capacity = capacity
        self.capacity_chars = capacity_chars
        self._tenants: dict[str, TenantQueries] = {}

    def resolve(self, tenant: str | None, query: str | None, extensions: Any) -> str | None:
        """The query to run for `tenant`: `query` itself, or the one its persisted hash names."""
        persisted = extensions.get("persistedQuery") if isinstance(extensions, dict) else None
        if persisted is None:
            return query
        if not isinstance(persisted, dict) or persisted.get("version") != 1:
            raise PersistedQueryRefused(400, "only version 1 of persisted queries is supported",
                                        "PERSISTED_QUERY_NOT_SUPPORTED")
        digest = persisted.get("sha256Hash")
        if not isinstance(digest, str) or len(digest) != 64:
            raise PersistedQueryRefused(
                400, "persistedQuery.sha256Hash must be the query's SHA-256 in hex", "BAD_INPUT")
        digest = digest.lower()
        held = self._tenants.get(tenant) if tenant is not None else None
        if query is None:
            known = held.get(digest) if held is not None else None
            if known is None:
                raise PersistedQueryRefused(200, "PersistedQueryNotFound", NOT_FOUND)
            return known
        if hashlib.sha256(query.encode("utf-8")).hexdigest() != digest:
            raise PersistedQueryRefused(
                400, "persistedQuery.sha256Hash is not the SHA-256 of the query sent with it",
                "BAD_INPUT")
        if tenant is not None:
            self._tenants.setdefault(tenant, TenantQueries()).put(
                digest, query, self.capacity, self.capacity_chars)
        return query
