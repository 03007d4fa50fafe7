"""`python -m bench [--quick | --smoke] [--only 1,2,...] [--keep-neo4j]`: the whole benchmark run.

Starts a managed local Neo4j in a temporary home (service.neo4j_local), runs the
workloads, prints the table and writes bench/results/latest.json (+ latest.md).
Exits non-zero only when a workload could not run at all; a slow figure or a
missed target is reported, never asserted.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
import traceback
from dataclasses import replace
from typing import Any, Awaitable, Callable

from service.store import Database, open_driver

from . import report
from .agent import agent as agent_session
from .api import api
from .carry import carry
from .core import QUICK, SMOKE, Bench, Sizes
from .loader import Chain
from .peer import peer
from .pins import pinned_render
from .planning import planning
from .prompt_cache import prompt_cache
from .provenance import reading
from .render import compacted, uncompacted
from .search import search_growth
from .replicas import replicas
from .server import HEAP, PAGECACHE_MB, BenchNeo4j
from .storage import storage
from .two_step import two_step_turns
from .transcript_folder import folder_import, memory_by_file_size
from .transcript_growth import growth_by_length
from .transcripts import follow_latency, grown_reimports, transcript_import
from .writes import append_at_head, persist, record_call, send_messages, write_floor
from .telemetry import send_with_export

SECTIONS = ("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
            "16", "17")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes and few samples: a smoke run for development")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes: runs every workload's code once (tests use it); "
                             "its figures mean nothing")
    parser.add_argument("--only", default="",
                        help=f"comma-separated workload numbers to run (of {','.join(SECTIONS)})")
    parser.add_argument("--keep-neo4j", action="store_true",
                        help="keep the temporary Neo4j home (logs, store) after the run")
    parser.add_argument("--search-nodes", default="",
                        help="workload 17's points, comma-separated node counts "
                             "(e.g. 10000,100000,1000000; default: the run's sizes)")
    parser.add_argument("--peer-points", default="",
                        help="workload 8's timed points, comma-separated turn counts; the "
                             "conversation runs to the largest (default: 100,1000,5000,20000)")
    parser.add_argument("--name", default="latest",
                        help="results file name under bench/results/ (default: latest)")
    return parser.parse_args(argv)


async def run(args: argparse.Namespace) -> int:
    args.quick = args.quick or args.smoke
    sizes = SMOKE if args.smoke else QUICK if args.quick else Sizes()
    if args.search_nodes:
        sizes = replace(sizes, search_points=tuple(
            int(n.replace("_", "")) for n in args.search_nodes.split(",") if n.strip()))
    if args.peer_points:
        points = tuple(sorted(int(n.replace("_", "")) for n in args.peer_points.split(",")
                              if n.strip()))
        sizes = replace(sizes, peer_points=points, peer_turns=points[-1])
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    only = {s.strip() for s in args.only.split(",") if s.strip()} or set(SECTIONS)
    started = time.perf_counter()
    load_before = report.load()
    machine = report.machine()
    print(f"ctxdag benchmark ({mode} run); load average "
          f"{load_before['1m']:.2f} / {load_before['5m']:.2f} / {load_before['15m']:.2f}",
          flush=True)
    # The driver logs each connection that a restart (bench/storage.py) drops; the
    # errors that matter surface as exceptions, and retries are counted (core.RetryLog).
    logging.getLogger("neo4j").addHandler(logging.NullHandler())
    neo = BenchNeo4j.start(keep=args.keep_neo4j)
    driver = open_driver(neo.uri)
    errors: list[str] = []
    try:
        database = Database(driver)
        agent = await database.ping()
        schema = await database.apply_schema()
        b = Bench.open(sizes, args.quick, neo, driver)
        b.log(f"{agent} at {neo.uri} (home {neo.home}, heap {HEAP}, page cache "
              f"{PAGECACHE_MB} MiB), schema version {schema}")
        shape = await b.loader.verify_shape()
        b.facts["bulk_loader_check"] = shape
        if not shape["same_node_shape"] or not shape["same_session_fields"] or shape["violations"]:
            raise RuntimeError(f"the bulk loader does not write what append_message writes: {shape}")
        start_floor = await b.floor("start")
        b.log(f"floor: RETURN 1 p50 {start_floor.p50_ms:.3f} ms, p95 {start_floor.p95_ms:.3f} ms "
              f"(n={start_floor.n})")

        chains: dict[int, Chain] = {}

        async def section(number: str, work: Callable[[], Awaitable[Any]],
                          label: str = "") -> Any:
            if number not in only:
                return None
            t0 = time.perf_counter()
            b.facts.setdefault("load_1m_at_start_of", {})[number + label] = round(
                os.getloadavg()[0], 2)
            try:
                return await work()
            except Exception as e:  # noqa: BLE001 - reported, and the other workloads go on
                errors.append(f"workload {number}: {type(e).__name__}: {e}")
                traceback.print_exc()
                b.add(f"{number} (error)", f"{type(e).__name__}: {e}"[:200], None, None,
                      status="error")
                return None
            finally:
                b.facts.setdefault("section_seconds", {})[number + label] = round(
                    time.perf_counter() - t0, 1)

        # Storage first, on a fresh store; its conversation is the 10,000-node chain
        # that workloads 2 and 4 reuse.
        grown = await section("7", lambda: storage(b))
        if grown is not None:
            chains[grown.messages] = grown
        await section("1", lambda: compacted(b))
        rendered = await section("2", lambda: uncompacted(b, chains))
        chains.update(rendered or {})

        async def appends() -> None:
            if not any(n <= 5_000 for n in chains):
                chains[1_000] = await b.loader.chain("bench append 1000", 1_000)
            await write_floor(b)
            await append_at_head(b, chains)

        await section("3", appends, " append")

        async def record() -> None:
            big = [c for c in chains.values() if c.messages >= sizes.record_reads]
            chain = big[0] if big else await b.loader.chain("bench record", sizes.record_reads)
            await record_call(b, chain)

        await section("4", record)
        await section("5", lambda: reading(b))
        await section("6", lambda: persist(b))
        await section("3", lambda: send_messages(b), " send_message")
        await section("3", lambda: send_with_export(b), " send_message with export")
        await section("3", lambda: two_step_turns(b), " the two-step turn")
        await section("8", lambda: peer(b))
        await section("9", lambda: api(b))
        await section("12", lambda: agent_session(b))
        await section("13", lambda: transcript_import(b))
        await section("13", lambda: folder_import(b))
        await section("13", lambda: memory_by_file_size(b))
        await section("13", lambda: follow_latency(b))
        await section("13", lambda: growth_by_length(b))
        await section("13", lambda: grown_reimports(b))
        await section("14", lambda: pinned_render(b))
        await section("15", lambda: carry(b))
        await section("16", lambda: prompt_cache(b))
        await section("17", lambda: search_growth(b))
        await section("11", lambda: replicas(b))  # `ctxdag serve` processes over HTTP
        await section("10", lambda: planning(b))  # last: it clears Neo4j's plan cache
        end_floor = await b.floor("end")
        b.log(f"floor at the end: p50 {end_floor.p50_ms:.3f} ms")
        b.facts["bulk_loaded_nodes"] = b.loader.nodes_loaded
        b.facts["bulk_load_seconds"] = round(b.loader.seconds, 1)
    finally:
        await driver.close()
        neo.stop()
    load_after = report.load()
    runtime = time.perf_counter() - started
    rows = sorted(b.rows, key=lambda r: int(r["section"].split()[0]))
    result = {
        "run": {"mode": mode, "runtime_s": round(runtime, 1),
                "load_before": load_before, "load_after": load_after,
                "neo4j": {"agent": agent, "version": neo.version, "heap": HEAP,
                          "pagecache_mb": PAGECACHE_MB, "schema": schema},
                "tenant": b.tenant, "errors": errors},
        "machine": machine,
        "floor": {"query": "RETURN 1 via Database.driver.execute_query",
                  "measurements": b.floors},
        "sizes": {k: v for k, v in vars(sizes).items()},
        "facts": b.facts,
        "rows": rows,
    }
    path = report.write(result, args.name)
    print()
    print(report.text_table(rows))
    print()
    print(f"runtime {runtime:.0f} s; load average before {load_before['1m']:.2f}, after "
          f"{load_after['1m']:.2f}; results in {path}")
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return 1 if errors else 0


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(run(parse(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    raise SystemExit(main())
