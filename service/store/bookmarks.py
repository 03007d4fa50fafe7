"""Bookmarks shared by the statements of one unit of work (a GraphQL operation): each waits
until the server it runs on has applied the transactions the scope's bookmarks name, and
adds its own commit's bookmark, so the scope's later reads see its writes on any server
and the scope ends holding the bookmarks to hand on (db.py runs statements with the
current scope's manager, none outside a scope).

How long a statement may wait is the scope's `wait_seconds` (`bookmark_wait`), not Neo4j's
own timeout (db.transaction.bookmark_ready_timeout, 30 s by default), which the driver
retries as a transient error: a bookmark naming a transaction the database never reaches
(it was restored from an older backup since, say) held a statement for two minutes.
"""
from __future__ import annotations

import asyncio
import contextlib
import contextvars
from typing import AsyncIterator, Callable, Iterable, Iterator

import neo4j
from neo4j import AsyncGraphDatabase
from neo4j.exceptions import Neo4jError

from ..errors import BadInput, CtxdagError, Unavailable

INVALID_BOOKMARK_CODES = frozenset({"Neo.ClientError.Transaction.InvalidBookmark",
                                    "Neo.ClientError.Transaction.InvalidBookmarkMixture"})
BOOKMARK_TIMEOUT_CODE = "Neo.TransientError.Transaction.BookmarkTimeout"


class BookmarkScope:
    """The bookmarks one unit of work (a GraphQL operation) shares across its statements.

    `given`: bookmarks a client sent, which `origin` names for errors ("sent in the
    Ctxdag-Bookmarks header"). A scope is inert (its statements run with no manager, as
    outside any scope) until `start`, which makes its one `AsyncBookmarkManager` from them.

    Statements use the manager only while the scope is open (`bookmark_scope` closes it on
    exit), so a task spawned inside it that outlives it never waits on it. With
    `shared=False` only the task that opened the scope uses it, not tasks spawned meanwhile
    (a subscription lives as long as its socket; a process-wide poller it starts must not
    wait on one client's bookmarks).

    `wait_seconds`: how long each statement may wait for its server to reach the scope's
    bookmarks (None: as long as Neo4j waits; the service's own maintenance scopes).
    """

    def __init__(self, given: Iterable[str] = (), origin: str = "", *,
                 shared: bool = True, wait_seconds: float | None = None) -> None:
        self.given = tuple(dict.fromkeys(given))
        self.origin = origin
        self.shared = shared
        self.wait_seconds = wait_seconds
        self.manager: neo4j.api.AsyncBookmarkManager | None = None
        self.open = False
        self.refused = False  # Neo4j refused the given bookmarks, or never reached them
        self._owner: asyncio.Task | None = None

    def start(self) -> "BookmarkScope":
        """Gives the scope its manager, holding the given bookmarks."""
        if self.manager is None:
            self.manager = AsyncGraphDatabase.bookmark_manager(
                initial_bookmarks=neo4j.Bookmarks.from_raw_values(self.given))
        return self

    def manager_here(self) -> neo4j.api.AsyncBookmarkManager | None:
        """The manager a statement run now, in this task, uses (None: none)."""
        if not self.open or self.manager is None:
            return None
        if not self.shared and _current_task() is not self._owner:
            return None
        return self.manager

    async def bookmarks(self) -> list[str]:
        """The bookmarks to hand on: the scope's last commits' (its given ones until it
        has committed anything); none when it never started or its given ones were
        refused (nothing ran, and they are not to be handed back)."""
        if self.manager is None or self.refused:
            return []
        return sorted(await self.manager.get_bookmarks())


def _current_task() -> asyncio.Task | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop
        return None


_scope: contextvars.ContextVar[BookmarkScope | None] = contextvars.ContextVar(
    "ctxdag_bookmark_scope", default=None)


@contextlib.contextmanager
def bookmark_scope(scope: BookmarkScope | None) -> Iterator[BookmarkScope | None]:
    """Statements run inside (by this task, and by tasks it spawns meanwhile when the scope
    is shared) use `scope`'s manager once it has started; None runs them with none (code
    that starts background work from inside an operation may wrap the start in
    `bookmark_scope(None)`). Context variables are per task, so concurrent scopes never
    meet."""
    if scope is not None:
        scope.open, scope._owner = True, _current_task()
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        if scope is not None:
            scope.open = False
        try:
            _scope.reset(token)
        except ValueError:  # left in another context than entered: that one ends with its task
            pass


def refused_bookmarks(error: Neo4jError, scope: BookmarkScope | None) -> CtxdagError | None:
    """A scope's bookmarks the database refused (or never reached), said as such; None when
    the error is not about bookmarks. Neo4j's own text is not passed on: on a timeout it
    names the database's latest transaction id."""
    if scope is None:
        return None
    if error.code == BOOKMARK_TIMEOUT_CODE:
        scope.refused = True
        return not_reached(scope)
    if error.code in INVALID_BOOKMARK_CODES and scope.given:
        scope.refused = True
        return BadInput(f"Neo4j refused the bookmarks {scope.origin or 'given'}: they are not "
                        f"bookmarks of this database ({error.code}); send back only "
                        "bookmarks a response's extensions.bookmarks carried")
    return None


def not_reached(scope: BookmarkScope) -> Unavailable:
    what = (f"the bookmarks {scope.origin or 'given'}" if scope.given
            else "this operation's own writes")
    within = (f"within {scope.wait_seconds:g} s (CTXDAG_BOOKMARK_WAIT_SECONDS)"
              if scope.wait_seconds is not None else "in time")
    return Unavailable(f"Neo4j has not reached the writes of {what} {within}; try again "
                       "shortly, or send no bookmarks to read without waiting for them")


@contextlib.asynccontextmanager
async def bookmark_wait(scope: BookmarkScope | None, manager: object | None,
                        ) -> AsyncIterator[Callable[[], None]]:
    """Bounds, by `scope.wait_seconds`, a statement run with `manager`: from its start (a
    connection from the pool, BEGIN) until Neo4j starts answering it. The wait for
    bookmarks is in BEGIN, which `execute_query` sends with the statement, and Neo4j
    answers the statement once it is planned and started; its work (and any lock it waits
    for) comes after, while the rows are read. So the statement's row reader calls what
    this yields first, which lifts the bound, and a statement that takes long to run is
    never cut short. Past the bound, UNAVAILABLE (`not_reached`)."""
    if scope is None or manager is None or scope.wait_seconds is None:
        yield _answered
        return
    deadline = asyncio.timeout(scope.wait_seconds)
    try:
        async with deadline:
            yield lambda: deadline.reschedule(None)
    except TimeoutError:
        if not deadline.expired():
            raise
        scope.refused = True
        raise not_reached(scope) from None


def _answered() -> None:
    return None


def current_scope() -> BookmarkScope | None:
    return _scope.get()
