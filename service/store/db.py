"""The one door to Neo4j: runs named statements, translates driver errors.

Every statement runs in a managed transaction (the driver retries transient
failures), is consumed inside it, and counts one round trip.

Routing: a statement that only reads runs with `RoutingControl.READ` (`read`,
`read_untorn`), so on a cluster or Aura (`neo4j://`, `neo4j+s://`) a follower or read
replica serves it; every write runs with `WRITE`, on the leader. The one read sent to
the leader on purpose is the schema version `apply_schema` decides its writes by.

Bookmarks: statements run with no bookmark manager (the driver's shared default would
make every statement wait for every other's bookmarks), unless they run inside a
`BookmarkScope` (bookmarks.py; the API opens one per GraphQL operation).
"""
from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Iterable, Mapping

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase
from neo4j.exceptions import (
    ConstraintError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from ..errors import Conflict, CtxdagError, StoreFailure, Unavailable
from .bookmarks import (
    BookmarkScope, bookmark_scope, bookmark_wait, current_scope, refused_bookmarks,
)
from .queries import Query, load_migrations, packaged_queries

Rows = list[dict[str, Any]]
RowCheck = Callable[[Rows], None]


def open_driver(uri: str, user: str = "neo4j", password: str = "") -> AsyncDriver:
    """One driver per process. Timeouts are bounded so an outage is reported, not waited out."""
    auth = neo4j.basic_auth(user, password) if password else None
    return AsyncGraphDatabase.driver(
        uri,
        auth=auth,
        connection_timeout=5.0,
        connection_acquisition_timeout=10.0,
        max_transaction_retry_time=15.0,
        notifications_min_severity="OFF",
    )


@contextlib.asynccontextmanager
async def translate_driver_errors() -> AsyncIterator[None]:
    """The single place where driver errors become ctxdag errors."""
    try:
        yield
    except CtxdagError:
        raise
    except ConstraintError as e:
        raise Conflict(f"the write conflicts with stored data: {e.message}") from e
    except (ServiceUnavailable, SessionExpired) as e:
        raise Unavailable(f"Neo4j is unreachable: {e}") from e
    except TransientError as e:
        if "threshold reached" in (e.message or ""):  # a transaction memory limit
            raise Unavailable(
                "Neo4j refused the write: it needs more memory than Neo4j lets a transaction "
                f"use ({e.message}). Nothing was written. A write this large (a transcript's "
                "growth, a session's backup) is one transaction: give Neo4j more heap (the "
                "managed one: CTXDAG_NEO4J_HEAP, 1g by default, of which a transaction may "
                "use 70%) and import it again") from e
        if e.code == "Neo.TransientError.General.OutOfMemoryError":
            # The heap, or the network buffers a row of the answer is encoded in.
            raise Unavailable(
                f"Neo4j ran out of memory for this request ({e.message}). Nothing was "
                "written. Ask for less at once, or give Neo4j more memory (the managed "
                "one: CTXDAG_NEO4J_HEAP, 1g by default; its network buffers are as large)"
            ) from e
        raise Unavailable(f"Neo4j could not complete the transaction in time: {e.message}") from e
    except Neo4jError as e:
        raise StoreFailure(f"Neo4j refused a statement ({e.code}): {e.message}") from e
    except (DriverError, OSError, asyncio.TimeoutError) as e:
        raise Unavailable(f"Neo4j is unreachable: {e}") from e


def _dropped(name: str) -> str:
    """What a statement's failure says when Neo4j dropped its connection and answers a new
    one. Neo4j encodes a result's row whole in its network buffers (direct memory, as large
    as its heap by default) and closes the connection when a row outgrows them."""
    return (f"Neo4j closed the connection while answering {name} (after the driver's "
            "retries), and answers other requests: most likely the answer is more than its "
            "network buffers hold (Neo4j's debug.log then shows an OutOfDirectMemoryError). "
            "If it happens again, ask for less at once or give Neo4j more memory (the "
            "managed one: CTXDAG_NEO4J_HEAP)")


_PROBE_SECONDS = 5.0


@dataclass
class RoundTrips:
    """Counts statements sent, per name and per routing ("r": readers, "w": the leader).
    Tests use it to hold the one-round-trip rules."""

    total: int = 0
    by_name: dict[str, int] = field(default_factory=dict)
    by_routing: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, name: str, routing: neo4j.RoutingControl | None = None) -> None:
        self.total += 1
        self.by_name[name] = self.by_name.get(name, 0) + 1
        if routing is not None:
            counts = self.by_routing.setdefault(name, {})
            counts[routing.value] = counts.get(routing.value, 0) + 1


class Database:
    def __init__(
        self,
        driver: AsyncDriver,
        queries: Mapping[str, Query] | None = None,
        database: str | None = None,
    ) -> None:
        self.driver = driver
        self.queries = dict(queries) if queries is not None else packaged_queries()
        self.database = database
        self.round_trips = RoundTrips()

    async def read(self, query_name: str, /, **params: Any) -> Rows:
        """Runs one statement that only reads, on a reader (a follower or read replica when
        the driver routes)."""
        query, bound = self._prepare(query_name, params, neo4j.RoutingControl.READ)
        return await self._execute(query, bound, neo4j.RoutingControl.READ, None)

    async def read_on_leader(self, query_name: str, /, **params: Any) -> Rows:
        """Runs one statement that only reads on the leader, which has every commit: for
        reads that must see writes made through any process at once (session events),
        where a follower might lag."""
        query, bound = self._prepare(query_name, params, neo4j.RoutingControl.WRITE)
        return await self._execute(query, bound, neo4j.RoutingControl.WRITE, None)

    async def read_untorn(self, query_name: str, /, torn: Callable[[Rows], bool],
                          attempts: int = 5, **params: Any) -> Rows:
        """A read that is repeated while `torn` says it saw a write half applied.

        Under read-committed isolation a reader walking a session's relationships while
        an append replaces HEAD can see neither the old nor the new edge.
        """
        for _ in range(attempts - 1):
            rows = await self.read(query_name, **params)
            if not torn(rows):
                return rows
            await asyncio.sleep(0.01)
        return await self.read(query_name, **params)

    async def write(self, query_name: str, /, check: RowCheck | None = None, **params: Any) -> Rows:
        """Runs one statement in one write transaction.

        `check` sees the rows inside the transaction; an error it raises rolls
        the whole write back, so bad input leaves nothing behind.
        """
        query, bound = self._prepare(query_name, params, neo4j.RoutingControl.WRITE)
        return await self._execute(query, bound, neo4j.RoutingControl.WRITE, check)

    async def _read_on_leader(self, query_name: str, /, **params: Any) -> Rows:
        """A read that decides a write, so it must see the latest commit: on the leader."""
        query, bound = self._prepare(query_name, params, neo4j.RoutingControl.WRITE)
        return await self._execute(query, bound, neo4j.RoutingControl.WRITE, None)

    async def _execute(self, query: Query, bound: dict[str, Any],
                       routing: neo4j.RoutingControl, check: RowCheck | None) -> Rows:
        """One managed transaction (retried on transient errors) through `execute_query`,
        which sends BEGIN with the statement: two round trips to Neo4j where a session's
        `execute_read`/`execute_write` waits for BEGIN first and takes three."""
        scope = current_scope()
        manager = scope.manager_here() if scope is not None else None
        async with translate_driver_errors(), bookmark_wait(scope, manager) as answered:
            async def rows(result: neo4j.AsyncResult) -> Rows:
                answered()  # Neo4j has reached the bookmarks (bookmarks.py)
                # Rows as the driver decoded them. Record.data() would walk every value again
                # to turn graph objects into dicts (a third of a long render's client time);
                # statements here return maps, lists and scalars only.
                found = [dict(zip(record.keys(), record)) async for record in result]
                if check is not None:
                    check(found)  # inside the transaction: an error rolls it back
                return found

            try:
                return await self.driver.execute_query(
                    query.text, bound, routing_=routing, database_=self.database,
                    bookmark_manager_=manager, result_transformer_=rows)
            except Neo4jError as e:
                raise refused_bookmarks(e, scope) or e
            except (ServiceUnavailable, SessionExpired) as e:
                if await self._answers():
                    raise Unavailable(_dropped(query.name)) from e
                raise

    async def _answers(self) -> bool:
        """Whether Neo4j answers a new connection now: a connection it dropped mid-answer
        while it answers others tells an answer too large from an outage."""
        try:
            await asyncio.wait_for(self.driver.verify_connectivity(), _PROBE_SECONDS)
            return True
        except (DriverError, OSError, asyncio.TimeoutError):
            return False

    async def ping(self) -> str:
        """Returns the server agent, e.g. 'Neo4j/5.26.31'."""
        async with translate_driver_errors():
            await self.driver.verify_connectivity()
            info = await self.driver.get_server_info()
            return info.agent

    async def apply_schema(self) -> int:
        """Applies pending migrations idempotently; returns the schema version now in force.

        The version is read on the leader (a follower behind it could name an older one,
        and migrations would run again and record it). Schema commands and the version run
        on the leader; indexes are awaited on a reader that has applied them (the
        migrations' bookmarks), and on the leader too when the driver routes."""
        with bookmark_scope(BookmarkScope().start()) as scope:
            rows = await self._read_on_leader("schema_version_get")
            current = rows[0]["version"] if rows else 0
            async with translate_driver_errors():
                for migration in load_migrations():
                    if migration.version <= current:
                        continue
                    for statement in migration.statements:
                        await self.driver.execute_query(
                            statement, routing_=neo4j.RoutingControl.WRITE,
                            database_=self.database, bookmark_manager_=scope.manager)
                    await self.write("schema_version_set", version=migration.version,
                                     migration=migration.name)
                    current = migration.version
            await self.read("schema_await_indexes")
            if self.routes:
                await self._read_on_leader("schema_await_indexes")
        return current

    @property
    def routes(self) -> bool:
        """Whether the driver routes (neo4j://, neo4j+s://): reads and writes may then
        reach different servers."""
        return isinstance(self.driver, neo4j.AsyncNeo4jDriver)

    async def plan_statements(self, names: Iterable[str] | None = None) -> list[str]:
        """Has Neo4j plan every statement (of `names`, when given) now, before a request
        waits for it (0.3-1 s each on first use). Each runs once with null parameters in a
        transaction that is rolled back: nothing it does is kept, and an error it raises on
        nulls does not matter, as Neo4j plans a statement before running it. Parameters
        travel in one map, so one plan per statement serves every call (queries.py).
        Returns the names planned.

        Every server keeps its own plans. Each statement is planned on the leader; when the
        driver routes, the statements that only read are planned again on a reader (the one
        this process's reads reach first). Whether one only reads is what Neo4j reported of
        its run on the leader ("r"); one whose run nulls stopped before Neo4j reported it is
        planned on the reader too, in a read transaction rolled back like every other here
        (nothing of it can be kept, and Neo4j refuses writes in a read transaction)."""
        planned, readers = [], []
        async with translate_driver_errors():
            async with self.driver.session(database=self.database,
                                           default_access_mode=neo4j.WRITE_ACCESS) as session:
                for query in self.queries.values() if names is None else \
                        [self.queries[name] for name in names]:
                    query_type = await self._plan(session, query)
                    planned.append(query.name)
                    if query_type in ("r", None):
                        readers.append(query)
            if self.routes:
                async with self.driver.session(database=self.database,
                                               default_access_mode=neo4j.READ_ACCESS) as session:
                    for query in readers:
                        await self._plan(session, query)
        return planned

    @staticmethod
    async def _plan(session: neo4j.AsyncSession, query: Query) -> str | None:
        """Runs `query` on nulls in a transaction rolled back; its query type ("r", "rw",
        "w", "s") when the run got that far."""
        tx = await session.begin_transaction()
        try:
            summary = await (await tx.run(query.text, query.bind(
                dict.fromkeys(query.params)))).consume()
            return summary.query_type
        except neo4j.exceptions.ClientError:
            return None  # nulls where values belong: planned all the same
        finally:
            await tx.close()

    def _prepare(self, name: str, params: Mapping[str, Any],
                 routing: neo4j.RoutingControl) -> tuple[Query, dict[str, Any]]:
        query = self.queries[name]
        bound = query.bind(params)
        self.round_trips.add(name, routing)
        return query, bound

