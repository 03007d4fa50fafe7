"""The one door to Neo4j: runs named statements, translates driver errors.

Every statement runs in a managed transaction (the driver retries transient
failures), is consumed inside it, and counts one round trip.
"""
from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Mapping

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
        raise Unavailable(f"Neo4j could not complete the transaction in time: {e.message}") from e
    except Neo4jError as e:
        raise StoreFailure(f"Neo4j refused a statement ({e.code}): {e.message}") from e
    except (DriverError, OSError, asyncio.TimeoutError) as e:
        raise Unavailable(f"Neo4j is unreachable: {e}") from e


@dataclass
class RoundTrips:
    """Counts statements sent, per name. Tests use it to hold the one-round-trip rules."""

    total: int = 0
    by_name: dict[str, int] = field(default_factory=dict)

    def add(self, name: str) -> None:
        self.total += 1
        self.by_name[name] = self.by_name.get(name, 0) + 1


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
        query, bound = self._prepare(query_name, params)
        return await self._execute(query, bound, neo4j.RoutingControl.READ, None)

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
        query, bound = self._prepare(query_name, params)
        return await self._execute(query, bound, neo4j.RoutingControl.WRITE, check)

    async def _execute(self, query: Query, bound: dict[str, Any],
                       routing: neo4j.RoutingControl, check: RowCheck | None) -> Rows:
        """One managed transaction (retried on transient errors) through `execute_query`,
        which sends BEGIN with the statement: two round trips to Neo4j where a session's
        `execute_read`/`execute_write` waits for BEGIN first and takes three."""
        async def rows(result: neo4j.AsyncResult) -> Rows:
            # Rows as the driver decoded them. Record.data() would walk every value again
            # to turn graph objects into dicts (a third of a long render's client time);
            # statements here return maps, lists and scalars only.
            found = [dict(zip(record.keys(), record)) async for record in result]
            if check is not None:
                check(found)  # inside the transaction: an error rolls it back
            return found

        async with translate_driver_errors():
            return await self.driver.execute_query(
                query.text, bound, routing_=routing, database_=self.database,
                bookmark_manager_=None, result_transformer_=rows)

    async def ping(self) -> str:
        """Returns the server agent, e.g. 'Neo4j/5.26.31'."""
        async with translate_driver_errors():
            await self.driver.verify_connectivity()
            info = await self.driver.get_server_info()
            return info.agent

    async def apply_schema(self) -> int:
        """Applies pending migrations idempotently; returns the schema version now in force."""
        rows = await self.read("schema_version_get")
        current = rows[0]["version"] if rows else 0
        async with translate_driver_errors():
            for migration in load_migrations():
                if migration.version <= current:
                    continue
                for statement in migration.statements:
                    await self.driver.execute_query(statement, database_=self.database)
                await self.write("schema_version_set", version=migration.version,
                                 migration=migration.name)
                current = migration.version
        await self.write("schema_await_indexes")
        return current

    async def plan_statements(self) -> list[str]:
        """Has Neo4j plan every statement now, before a request waits for it (0.3-1 s each
        on first use). Each runs once with null parameters in a transaction that is rolled
        back: nothing it does is kept, and an error it raises on nulls does not matter, as
        Neo4j plans a statement before running it. Parameters travel in one map, so one
        plan per statement serves every call (queries.py). Returns the names planned."""
        planned = []
        async with translate_driver_errors():
            async with self.driver.session(database=self.database) as session:
                for query in self.queries.values():
                    tx = await session.begin_transaction()
                    try:
                        await (await tx.run(query.text, query.bind(
                            dict.fromkeys(query.params)))).consume()
                    except neo4j.exceptions.ClientError:
                        pass  # nulls where values belong: planned all the same
                    finally:
                        await tx.close()
                    planned.append(query.name)
        return planned

    def _prepare(self, name: str, params: Mapping[str, Any]) -> tuple[Query, dict[str, Any]]:
        query = self.queries[name]
        bound = query.bind(params)
        self.round_trips.add(name)
        return query, bound

