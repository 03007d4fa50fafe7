"""Read-your-writes across service replicas: Neo4j bookmarks carried by the client, sealed.

Reads run on followers (service/store/db.py), which may not have applied the latest
commits yet. A client that must see its own writes from any replica sends the bookmarks
its last response carried; every statement of that operation then waits until the
server it runs on has applied them (at most CTXDAG_BOOKMARK_WAIT_SECONDS), and the
response carries the bookmarks to send next. Clients hold each Neo4j bookmark sealed for
their tenant (bookmark_seal.py): opaque, and opened here, per operation, or refused:

- over HTTP, the `Ctxdag-Bookmarks` header: the bookmarks separated by commas (a sealed
  bookmark is URL-safe base64, so it holds neither commas nor spaces); or the request's
  `extensions.bookmarks`, a list of strings;
- over a websocket, `bookmarks` (a list, or `Ctxdag-Bookmarks` as in the header) in the
  `connection_init` payload, and each operation's `extensions.bookmarks`. A connection
  also remembers the bookmarks its operations returned, so a read after a mutation on one
  socket sees it whichever server serves the read;
- every query or mutation that holds bookmarks, and every mutation, answers with
  `extensions.bookmarks` (a list of strings).

A query without bookmarks runs with no manager and waits for nothing, as before. A
mutation always gets a manager of its own (empty when the client sent nothing): its reads
after its writes must see them (a turn renders the message it has just appended), and its
response hands the client the bookmarks of its writes.
"""
from __future__ import annotations

import contextvars
import re
from typing import Any, AsyncIterator, Iterable, Iterator

from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

from ..errors import BadInput
from ..store.bookmarks import BookmarkScope, bookmark_scope
from .bookmark_seal import BookmarkSeal

HEADER = "Ctxdag-Bookmarks"
MAX_BOOKMARKS = 32
MAX_BOOKMARK_CHARS = 256
# Printable ASCII but the separator and spaces (a sealed bookmark is URL-safe base64).
_BOOKMARK = re.compile(r"[!-+\--~]+")

FROM_HEADER = f"sent in the {HEADER} header"
FROM_CONNECTION_INIT = "sent in connection_init"
FROM_EXTENSIONS = "sent in extensions.bookmarks"
FROM_CONNECTION = "this connection's earlier operations returned"

# A websocket operation's `extensions` (strawberry does not hand them on): set by
# transport.py around the start of the operation's task, which copies it.
websocket_operation_extensions: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "ctxdag_ws_operation_extensions", default=None)


def _checked(items: Iterable[Any], where: str) -> list[str]:
    found = []
    for item in items:
        if not isinstance(item, str):
            raise BadInput(f"the bookmarks {where} must be strings; got {type(item).__name__}")
        if len(item) > MAX_BOOKMARK_CHARS:
            raise BadInput(f"a bookmark {where} is {len(item)} characters long; a bookmark "
                           f"is at most {MAX_BOOKMARK_CHARS}")
        if not _BOOKMARK.fullmatch(item):
            raise BadInput(f"a bookmark {where} holds characters no bookmark holds "
                           "(printable ASCII only, no spaces or commas); got "
                           f"{item[:40]!r}")
        found.append(item)
    if len(found) > MAX_BOOKMARKS:
        raise BadInput(f"{len(found)} bookmarks were {where.removeprefix('sent ')}; at most "
                       f"{MAX_BOOKMARKS} are accepted (send the latest response's)")
    return list(dict.fromkeys(found))


def from_text(text: str, where: str) -> list[str]:
    """Comma-separated bookmarks; spaces around them and empty items are ignored."""
    return _checked([item.strip() for item in text.split(",") if item.strip()], where)


def from_json(value: Any, where: str) -> list[str]:
    """A list of bookmark strings (null: none)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadInput(f"the bookmarks {where} must be a list of strings; got "
                       f"{type(value).__name__}")
    return _checked(value, where)


class ClientBookmarks:
    """The bookmarks one connection holds, sealed as clients hold them: an HTTP request's
    header, or a websocket's handshake header and connection_init, then what its
    operations returned. A malformed value is remembered and refused, BAD_INPUT, by each
    operation."""

    def __init__(self) -> None:
        self.held: dict[str, str] = {}  # bookmark -> where it came from
        self.problem: BadInput | None = None

    @classmethod
    def from_headers(cls, values: list[str]) -> "ClientBookmarks":
        held = cls()
        held.add(lambda: from_text(",".join(values), FROM_HEADER), FROM_HEADER)
        return held

    def add_connection_init(self, payload: Any) -> None:
        if not isinstance(payload, dict):
            return
        for key, value in payload.items():
            if not isinstance(key, str):
                continue
            if key.lower() == "bookmarks":
                self.add(lambda: from_json(value, FROM_CONNECTION_INIT), FROM_CONNECTION_INIT)
            elif key.lower() == HEADER.lower():
                self.add(lambda: from_json(value, FROM_CONNECTION_INIT)
                         if not isinstance(value, str)
                         else from_text(value, FROM_CONNECTION_INIT), FROM_CONNECTION_INIT)

    def add(self, parse: Any, where: str) -> None:
        try:
            for bookmark in parse():
                self.held.setdefault(bookmark, where)
        except BadInput as e:
            self.problem = self.problem or e

    def advance(self, used: Iterable[str], now: Iterable[str]) -> None:
        """An operation that started from `used` ended holding `now` (as a bookmark
        manager does: what was used is superseded; concurrent operations' results add up)."""
        for bookmark in used:
            self.held.pop(bookmark, None)
        for bookmark in now:
            self.held.setdefault(bookmark, FROM_CONNECTION)


def _origin(sources: Iterable[str]) -> str:
    named = list(dict.fromkeys(sources))
    return " and ".join(named)


class BookmarksPerOperation(SchemaExtension):
    """One bookmark scope per operation (a context variable: per task, so concurrent
    operations never share a manager), from the bookmarks the client holds, opened with
    the context's `bookmark_seal` for its tenant; the bookmarks handed back are sealed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.scope: BookmarkScope | None = None
        self.problem: BadInput | None = None
        self.held: ClientBookmarks | None = None
        self.used: tuple[str, ...] = ()
        self.seal: BookmarkSeal | None = None
        self.tenant: str | None = None
        self.handed: list[str] | None = None

    async def on_operation(self) -> AsyncIterator[None]:
        context = self.execution_context.context
        held = getattr(context, "bookmarks", None)
        self.held = held if isinstance(held, ClientBookmarks) else None
        self.seal = getattr(context, "bookmark_seal", None)
        self.tenant = getattr(context, "tenant", None)
        sent: dict[str, str] = dict(self.held.held) if self.held is not None else {}
        self.used = tuple(sent)
        self.problem = self.held.problem if self.held is not None else None
        extensions = self.execution_context.operation_extensions
        if extensions is None:
            extensions = websocket_operation_extensions.get()
        if self.problem is None and isinstance(extensions, dict):
            try:
                for bookmark in from_json(extensions.get("bookmarks"), FROM_EXTENSIONS):
                    sent.setdefault(bookmark, FROM_EXTENSIONS)
            except BadInput as e:
                self.problem = e
        if self.problem is None and len(sent) > MAX_BOOKMARKS:
            self.problem = BadInput(f"{len(sent)} bookmarks were given "
                                    f"({_origin(sent.values())}); at most {MAX_BOOKMARKS} "
                                    "are accepted (send the latest response's)")
        given: dict[str, str] = {}
        if self.problem is None:
            try:
                given = self._opened(sent)
            except BadInput as e:
                self.problem = e
        self.scope = None if self.problem else BookmarkScope(
            given, _origin(given.values()), wait_seconds=_wait_seconds(context))
        try:
            with bookmark_scope(self.scope):
                yield
        finally:
            scope = self.scope
            if (self.held is not None and scope is not None and scope.manager is not None
                    and not scope.refused):  # refused ones stay, and are refused again
                self.held.advance(self.used, await self._handed())

    def _opened(self, sent: dict[str, str]) -> dict[str, str]:
        """Neo4j's bookmarks (each to where it was sent) that the sealed ones hold. An
        operation without a tenant uses none: it is refused, UNAUTHENTICATED, anyway."""
        if self.seal is None or self.tenant is None:
            return {}
        opened: dict[str, str] = {}
        for bookmark, where in sent.items():
            opened.setdefault(self.seal.open(bookmark, self.tenant, where), where)
        return opened

    async def _handed(self) -> list[str]:
        """The scope's bookmarks, sealed for the tenant (once per operation)."""
        if self.handed is None:
            scope = self.scope
            bookmarks = await scope.bookmarks() if scope is not None else []
            self.handed = ([self.seal.seal(b, self.tenant) for b in bookmarks]
                           if self.seal is not None and self.tenant is not None else [])
        return self.handed

    def on_execute(self) -> Iterator[None]:
        if self.problem is not None:
            raise self.problem
        scope = self.scope
        if scope is not None:
            kind = self.execution_context.operation_type
            scope.shared = kind is not OperationType.SUBSCRIPTION
            if scope.given or kind is OperationType.MUTATION:
                scope.start()
        yield

    async def get_results(self) -> dict[str, Any]:
        scope = self.scope
        if scope is None or scope.manager is None or not scope.shared:
            return {}  # no manager; or a subscription, whose events carry none
        bookmarks = await self._handed()
        return {"bookmarks": bookmarks} if bookmarks else {}


def _wait_seconds(context: Any) -> float | None:
    runtime = getattr(context, "runtime", None)
    return runtime.settings.bookmark_wait_seconds if runtime is not None else None
