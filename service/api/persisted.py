"""Automatic persisted queries, Apollo's protocol over HTTP.

A client may send only a query's SHA-256 (`extensions.persistedQuery = {version: 1,
sha256Hash}`). A hash this process knows runs its query; an unknown one is answered
`PERSISTED_QUERY_NOT_FOUND` (HTTP 200), and the client sends hash and query together:
the hash is checked against the query, and the query is remembered. Per process and
bounded (least recently used go first): another replica, or a restart, only costs the
client that second request.
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

from cross_web import HTTPException

NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND"
CAPACITY = 1_000


class PersistedQueryRefused(HTTPException):
    """A persisted-query request that does not run, with the code the client reads."""

    def __init__(self, status_code: int, reason: str, code: str) -> None:
        super().__init__(status_code, reason)
        self.code = code


class PersistedQueries:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._queries: OrderedDict[str, str] = OrderedDict()

    def resolve(self, query: str | None, extensions: Any) -> str | None:
        """The query to run: `query` itself, or the one its persisted hash names."""
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
        if query is None:
            known = self._queries.get(digest)
            if known is None:
                raise PersistedQueryRefused(200, "PersistedQueryNotFound", NOT_FOUND)
            self._queries.move_to_end(digest)
            return known
        if hashlib.sha256(query.encode("utf-8")).hexdigest() != digest:
            raise PersistedQueryRefused(
                400, "persistedQuery.sha256Hash is not the SHA-256 of the query sent with it",
                "BAD_INPUT")
        self._queries[digest] = query
        self._queries.move_to_end(digest)
        while len(self._queries) > self.capacity:
            self._queries.popitem(last=False)
        return query
