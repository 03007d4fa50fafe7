"""The run's shared state: sizes, the database handles, the floor, and the result rows."""
from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable

from neo4j import AsyncDriver

from service.config import Settings
from service.runtime import Runtime
from service.store import Database, Ledger, Limits

from .loader import Loader, bench_queries
from .server import BenchNeo4j
from .timing import Stats, floor, measure_with_floor


@dataclass(frozen=True)
class Sizes:
    """Every size and sample count of a run; `--quick` swaps in the small set."""

    compacted_turns: tuple[int, ...] = (100, 1_000, 10_000)
    compacted_tail: int = 40
    compacted_samples: int = 300
    # Workload 1, branch strategy: branches × (nodes per branch, summaries per branch); each
    # branch k > 0 edits a user turn this many nodes above branch k-1's head (0: no rows).
    branch_count: int = 5
    branch_nodes: int = 2_000
    branch_summaries: int = 5
    branch_fork_back: int = 300
    chain_nodes: tuple[int, ...] = (100, 1_000, 5_000, 10_000)
    chain_samples: tuple[tuple[int, int], ...] = ((100, 200), (1_000, 60), (5_000, 15),
                                                  (10_000, 5))
    chain_timeout_s: float = 20.0  # a render that has not answered by then is reported failed
    chain_limit_probe: int = 20_000  # one render of a chain this long (0: no probe)
    append_samples: int = 200
    send_seconds: float = 8.0
    send_history: int = 100  # messages already in each session the clients write to
    record_reads: int = 2_000
    record_samples: int = 30
    reading_calls: tuple[int, ...] = (1_000, 10_000)
    reading_session_nodes: int = 400
    reading_reads_per_call: int = 20
    reading_samples: int = 300
    persist_covered: int = 5_000
    persist_samples: int = 3
    storage_points: tuple[int, ...] = (1_000, 5_000, 10_000)
    # 20,000: where LangGraph's SqliteSaver has written ~7 GB of checkpoints (every turn
    # runs on both sides; the windows before the points are timed).
    peer_turns: int = 20_000
    peer_points: tuple[int, ...] = (100, 1_000, 5_000, 20_000)
    peer_window: int = 50  # turns timed before each point
    peer_every: int = 200  # summarize every this many turns
    peer_keep: int = 20  # messages kept verbatim by each summarization
    peer_read_samples: int = 30
    peer_step_limit_s: float = 20.0  # a ctxdag turn or compaction slower than this stops workload 8
    floor_samples: int = 300
    agent_messages: int = 2_000  # workload 12: the agent session and its text twin
    loop_samples: int = 60  # workload 12: loop turns, each sampled in turn with a text turn
    planning_rounds: int = 3  # workload 10: plans and first turns measured this many times
    transcript_entries: int = 10_000  # workload 13: the Claude Code transcript imported
    transcript_folder_mb: float = 100.0  # workload 13: the generated folder of sessions
    growth_entries: tuple[int, ...] = (10_000, 40_000)  # workload 13: followed files grown
    pins_turns: tuple[int, ...] = (1_000, 5_000, 10_000)  # workload 14: compacted, with pins
    pins_count: int = 8  # workload 14: covered turns pinned in each session
    carry_history: tuple[int, ...] = (100, 1_000, 10_000)  # workload 15: history lengths
    carry_fork: int = 20  # workload 15: turns of the fork carried into HEAD
    carry_samples: int = 10  # workload 15: carry-overs timed per history length
    # Workload 16: the agent conversation per strategy, its context window and kept tail,
    # the stub's summary length, the history lengths its compacted render is timed at, the
    # marker facts planted in its first messages, and whether it runs without breakpoints
    # too (not at full size: those runs cost a third of the workload's time and measure what
    # the prefix rule fixes, 1.00x; --quick runs them).
    cache_messages: int = 2_000
    cache_window: int = 40_000
    cache_keep: int = 8_000
    cache_summary_tokens: int = 1_000
    cache_points: tuple[int, ...] = (500, 1_000, 2_000)
    cache_render_samples: int = 50
    cache_markers: int = 50
    cache_marker_span: int = 100
    cache_unmarked: bool = False
    # Workload 17: the tenant's ledger at each point (nodes: bulk-loaded sessions of this
    # many messages, each compacted but for a 40-message tail), the Chinese messages
    # planted apart, and the rounds sampled at each point. 1,000,000 only when asked
    # (`--search-nodes`): its load alone takes about 10 minutes on the 2-core machine.
    search_points: tuple[int, ...] = (10_000, 100_000)
    search_session_nodes: int = 10_000
    search_planted: int = 10
    search_samples: int = 50
    # Storage is measured after a restart (a clean shutdown flushes the store) and the
    # peer's ctxdag side runs on a fresh Neo4j; a smoke run skips both (its figures mean
    # nothing, and each start of a JVM costs 10-20 s).
    isolated_stores: bool = True

    def chain_samples_for(self, nodes: int) -> int:
        return dict(self.chain_samples).get(nodes, 10)


QUICK = Sizes(
    compacted_turns=(100, 1_000), compacted_samples=100,
    branch_nodes=500, branch_fork_back=150,
    chain_nodes=(100, 1_000, 2_000), chain_samples=((100, 60), (1_000, 20), (2_000, 10)),
    chain_limit_probe=0,
    append_samples=60, send_seconds=2.0, send_history=40,
    record_reads=500, record_samples=10,
    reading_calls=(200, 1_000), reading_session_nodes=100, reading_reads_per_call=10,
    reading_samples=100,
    persist_covered=1_000, persist_samples=1,
    storage_points=(500, 1_000, 2_000),
    peer_turns=400, peer_points=(100, 400), peer_window=30, peer_every=100, peer_read_samples=10,
    floor_samples=150, agent_messages=500, loop_samples=20, transcript_entries=2_000,
    transcript_folder_mb=20.0, growth_entries=(2_000, 8_000),
    pins_turns=(500, 1_000, 2_000),
    carry_history=(100, 1_000), carry_samples=5,
    cache_messages=500, cache_window=12_000, cache_keep=2_400, cache_summary_tokens=300,
    cache_points=(125, 250, 500), cache_render_samples=20, cache_unmarked=True,
    search_points=(10_000, 50_000), search_session_nodes=5_000, search_samples=20,
)

# `--smoke`: every workload runs its code once on tiny sizes, so a test can tell that the
# harness still runs against today's service (its figures mean nothing).
SMOKE = replace(
    QUICK, compacted_turns=(100,), compacted_samples=5, branch_count=2, branch_nodes=120,
    branch_summaries=2, branch_fork_back=40, chain_nodes=(100, 200),
    chain_samples=((100, 3), (200, 3)), append_samples=5, send_seconds=0.3, send_history=10,
    record_reads=100, record_samples=2, reading_calls=(20, 40), reading_session_nodes=50,
    reading_reads_per_call=5, reading_samples=5, persist_covered=100, storage_points=(100, 200),
    peer_turns=60, peer_points=(30, 60), peer_window=5, peer_every=20, peer_keep=6,
    peer_read_samples=3, floor_samples=20, agent_messages=60, loop_samples=3, planning_rounds=1, isolated_stores=False,
    transcript_entries=200, transcript_folder_mb=0.2, growth_entries=(100, 400), pins_turns=(100, 200), carry_history=(60, 120), carry_fork=4,
    carry_samples=2, cache_messages=30, cache_window=5_000, cache_keep=1_000,
    cache_summary_tokens=100, cache_points=(15, 30), cache_render_samples=3, cache_markers=10,
    cache_marker_span=20,
    search_points=(300, 600), search_session_nodes=200, search_samples=3,
)


class RetryLog(logging.Handler):
    """Counts the driver's transaction retries ("Transaction failed and will be retried"),
    by the error that caused them: a retry means a backoff of about a second or more."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.by_cause: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        if "will be retried" not in str(record.msg):
            return
        error = record.args[-1] if isinstance(record.args, tuple) and record.args else None
        cause = getattr(error, "code", None) or type(error).__name__
        self.by_cause[cause] = self.by_cause.get(cause, 0) + 1

    def snapshot(self) -> dict[str, int]:
        return dict(self.by_cause)

    def since(self, before: dict[str, int]) -> dict[str, int]:
        return {k: v - before.get(k, 0) for k, v in self.by_cause.items()
                if v - before.get(k, 0)}

    @classmethod
    def install(cls) -> "RetryLog":
        handler = cls()
        logger = logging.getLogger("neo4j.session")
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        return handler


@dataclass
class Bench:
    sizes: Sizes
    quick: bool
    neo: BenchNeo4j
    driver: AsyncDriver
    db: Database  # the service's statements only: what the measured calls run on
    runtime: Runtime  # the service's parts (ledger, compactor, turns) over `db`
    loader: Loader  # bench-only bulk statements, on their own Database
    tenant: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    floors: list[dict[str, Any]] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)
    retries: RetryLog = field(default_factory=RetryLog.install)
    _retry_mark: dict[str, int] = field(default_factory=dict)

    @classmethod
    def open(cls, sizes: Sizes, quick: bool, neo: BenchNeo4j, driver: AsyncDriver) -> "Bench":
        tenant = f"bench-{uuid.uuid4().hex[:10]}"
        db = Database(driver)
        runtime = Runtime.assemble(Settings.from_env({"CTXDAG_TENANT": tenant}), db)
        loader_db = Database(driver, bench_queries())
        loader = Loader(loader_db, Ledger.open(loader_db, tenant, Limits()))
        return cls(sizes, quick, neo, driver, db, runtime, loader, tenant)

    @property
    def ledger(self) -> Ledger:
        return self.runtime.ledger

    def log(self, text: str) -> None:
        print(f"[{time.perf_counter() - self.started:6.1f}s] {text}", flush=True)

    async def floor(self, label: str) -> Stats:
        """The floor right now; every row's ratio divides by the floor taken just before it."""
        stats = await floor(self.driver, samples=self.sizes.floor_samples)
        self.floors.append({"before": label, **stats.as_dict()})
        return stats

    async def timed(self, label: str, fn: Callable[[], Awaitable[Any]], *, samples: int,
                    warmup: int, max_seconds: float | None = None) -> tuple[Stats, Stats]:
        """Samples `fn` between two blocks of floor round trips; returns (stats, floor)."""
        stats, base = await measure_with_floor(self.driver, fn, samples=samples, warmup=warmup,
                                               max_seconds=max_seconds)
        self.floors.append({"around": label, **base.as_dict()})
        return stats, base

    def trips(self) -> int:
        return self.db.round_trips.total

    def add(self, section: str, case: str, stats: Stats | None, base: Stats | None, *,
            target: str = "", met: bool | None = None, note: str = "",
            round_trips: float | None = None, value: float | None = None, unit: str = "",
            status: str = "ok", **extra: Any) -> dict[str, Any]:
        row: dict[str, Any] = {
            "section": section, "case": case, "status": status,
            "n": stats.n if stats else None,
            "p50_ms": round(stats.p50_ms, 3) if stats else None,
            "p95_ms": round(stats.p95_ms, 3) if stats else None,
            "ratio": round(stats.p50_ms / base.p50_ms, 2) if stats and base else None,
            "floor_ms": round(base.p50_ms, 3) if base else None,
            "round_trips": round_trips, "value": value, "unit": unit,
            "target": target, "met": met, "note": note,
        }
        retried = self.retries.since(self._retry_mark)
        self._retry_mark = self.retries.snapshot()
        if retried:
            extra["driver_retries"] = retried
            row["note"] = (row["note"] + "; " if row["note"] else "") + "driver retried " + \
                ", ".join(f"{n}× {cause}" for cause, n in retried.items())
        if stats:
            row["stats"] = stats.as_dict()
        if extra:
            row["extra"] = extra
        self.rows.append(row)
        return row
