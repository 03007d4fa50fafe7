"""What a bookmark manager per operation costs (service/api/bookmarks.py), measured.

Standalone: `python -m bench.bookmark_overhead --uri bolt://127.0.0.1:7687` against a
running Neo4j (`ctxdag neo4j status` prints the managed one's URI). Prints microseconds
per operation, the median of interleaved rounds (each round runs every variant once in
turn, so drift in the server hits them alike):

1. the driver: one simple read through `execute_query` with no manager, with a fresh
   empty manager per operation, and with a fresh manager holding one bookmark;
2. the store: `Database.read` outside any scope, and inside a started `BookmarkScope`
   (with and without a given bookmark, and with the bound on the wait the API sets),
   handing its bookmarks on at the end;
3. the API over HTTP: a `session` query without and with the Ctxdag-Bookmarks header, and
   an `appendMessage` mutation with its manager (as served) and with managers disabled
   (the bookmarks a client sends are opened, those it is handed sealed: both included);
4. the seal alone (service/api/bookmark_seal.py): sealing one Neo4j bookmark, opening it.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
import uuid
from typing import Awaitable, Callable

import httpx
import neo4j
from neo4j import AsyncGraphDatabase

from service.api.bookmark_seal import BookmarkSeal
from service.store import Database, open_driver
from service.store.bookmarks import BookmarkScope, bookmark_scope

Variant = Callable[[], Awaitable[object]]


async def interleaved(variants: dict[str, Variant], rounds: int, per_round: int,
                      warmup: int = 200) -> dict[str, float]:
    for run in variants.values():
        for _ in range(warmup):
            await run()
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, run in variants.items():
            start = time.perf_counter()
            for _ in range(per_round):
                await run()
            samples[name].append((time.perf_counter() - start) / per_round * 1e6)
    return {name: statistics.median(values) for name, values in samples.items()}


def show(title: str, medians: dict[str, float]) -> None:
    base = next(iter(medians.values()))
    print(f"\n{title}")
    for name, value in medians.items():
        print(f"  {name:50s} {value:8.1f} us/op  ({value - base:+7.1f})")


async def driver_level(uri: str, rounds: int, per_round: int) -> None:
    driver = open_driver(uri)
    text = "MATCH (s:Session {id: $id}) RETURN s.id AS id"  # writes nothing, finds nothing
    seed = AsyncGraphDatabase.bookmark_manager()
    await driver.execute_query(text, {"id": "ses_bench"}, routing_=neo4j.RoutingControl.READ,
                               bookmark_manager_=seed)
    bookmarks = list(await seed.get_bookmarks())  # a read's: the database's latest commit

    async def run(manager) -> None:
        await driver.execute_query(text, {"id": "ses_bench"},
                                   routing_=neo4j.RoutingControl.READ,
                                   bookmark_manager_=manager)
        if manager is not None:
            await manager.get_bookmarks()

    variants = {
        "no manager": lambda: run(None),
        "fresh empty manager per operation": lambda: run(
            AsyncGraphDatabase.bookmark_manager()),
        "fresh manager with 1 bookmark": lambda: run(AsyncGraphDatabase.bookmark_manager(
            initial_bookmarks=neo4j.Bookmarks.from_raw_values(bookmarks))),
    }
    show("driver: one read via execute_query", await interleaved(variants, rounds, per_round))
    start = time.perf_counter()
    for _ in range(20000):
        await AsyncGraphDatabase.bookmark_manager().get_bookmarks()
    print(f"  (making a manager and reading it back alone: "
          f"{(time.perf_counter() - start) / 20000 * 1e6:.2f} us)")
    await driver.close()


async def store_level(uri: str, rounds: int, per_round: int) -> None:
    driver = open_driver(uri)
    db = Database(driver)
    with bookmark_scope(BookmarkScope().start()) as seed:
        await db.read("session_get_many", session_ids=["ses_bench"], tenant="bench")
    bookmarks = await seed.bookmarks()

    async def read() -> None:
        await db.read("session_get_many", session_ids=["ses_bench"], tenant="bench")

    async def scoped(given: list[str], wait_seconds: float | None = None) -> None:
        with bookmark_scope(BookmarkScope(given, wait_seconds=wait_seconds).start()) as scope:
            await read()
        await scope.bookmarks()

    variants = {"no scope (no manager)": read,
                "scope, no bookmarks given": lambda: scoped([]),
                "scope, 1 bookmark given": lambda: scoped(bookmarks),
                "scope, 1 bookmark given, wait bounded (as served)": lambda: scoped(
                    bookmarks, 10.0)}
    show("store: Database.read(session_get_many)", await interleaved(variants, rounds,
                                                                       per_round))
    await driver.close()


async def api_level(uri: str, rounds: int, per_round: int) -> None:
    import uvicorn

    from service.api.app import create_app
    from service.api.server import server_config
    from service.config import Settings
    from service.neo4j_local import free_port

    tenant = f"bench-bookmarks-{uuid.uuid4().hex[:6]}"
    settings = Settings.from_env({"NEO4J_URI": uri, "CTXDAG_TENANT": tenant})
    driver = open_driver(uri)
    port = free_port()
    server = uvicorn.Server(server_config(create_app(settings, Database(driver)), settings,
                                          "127.0.0.1", port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    url = f"http://127.0.0.1:{port}/graphql"
    async with httpx.AsyncClient(timeout=60) as http:
        async def gql(query: str, variables: dict, headers: dict | None = None) -> dict:
            body = (await http.post(url, json={"query": query, "variables": variables},
                                    headers=headers or {})).json()
            assert not body.get("errors"), body
            return body

        created = await gql("mutation { createSession(title: \"bench\") { id } }", {})
        sid = created["data"]["createSession"]["id"]
        bookmarks = ",".join(created["extensions"]["bookmarks"])
        query = "query($s: ID!) { session(id: $s) { id title headId } }"
        append = ("mutation($s: ID!) { appendMessage(sessionId: $s, role: USER, "
                  "content: \"x\") { id } }")
        real_start = BookmarkScope.start

        @contextlib.contextmanager
        def managers_disabled():
            BookmarkScope.start = lambda self: self  # the scope stays inert: no manager
            try:
                yield
            finally:
                BookmarkScope.start = real_start

        async def append_without_manager() -> None:
            with managers_disabled():
                await gql(append, {"s": sid})

        variants = {
            "query, no header (no manager)": lambda: gql(query, {"s": sid}),
            "query, Ctxdag-Bookmarks header": lambda: gql(query, {"s": sid},
                                                          {"Ctxdag-Bookmarks": bookmarks}),
            "mutation appendMessage, managers disabled": append_without_manager,
            "mutation appendMessage, its own manager": lambda: gql(append, {"s": sid}),
        }
        show("API over HTTP (loopback, one keep-alive client)",
             await interleaved(variants, rounds, per_round, warmup=50))
    server.should_exit = True
    await task
    await driver.close()


async def seal_level(uri: str, count: int = 20000) -> None:
    driver = open_driver(uri)
    manager = AsyncGraphDatabase.bookmark_manager()
    await driver.execute_query("RETURN 1", bookmark_manager_=manager)
    (bookmark,) = await manager.get_bookmarks()
    await driver.close()
    seal = BookmarkSeal([bytes(32)])
    sealed = seal.seal(bookmark, "bench")
    print(f"\nseal: a {len(bookmark)}-character Neo4j bookmark seals to {len(sealed)}")
    for name, run in (("seal", lambda: seal.seal(bookmark, "bench")),
                      ("open", lambda: seal.open(sealed, "bench", "sent in the bench"))):
        start = time.perf_counter()
        for _ in range(count):
            run()
        print(f"  {name:50s} {(time.perf_counter() - start) / count * 1e6:8.2f} us/op")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--per-round", type=int, default=1000)
    args = parser.parse_args()

    async def run() -> None:
        await driver_level(args.uri, args.rounds, args.per_round)
        await store_level(args.uri, args.rounds, args.per_round)
        await api_level(args.uri, args.rounds, max(args.per_round // 5, 50))
        await seal_level(args.uri)

    asyncio.run(run())


if __name__ == "__main__":
    main()
