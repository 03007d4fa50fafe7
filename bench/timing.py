"""Timing: samples with time.perf_counter, warm-up first, p50/p95, and the floor.

The floor is the median round trip of `RETURN 1` over the same async driver
(`Database.driver.execute_query`). Where an operation is sampled one call at a
time, its samples are bracketed by two blocks of floor round trips, right before
and right after (`measure_with_floor`), so each row divides by a floor taken under
the same machine load; elsewhere (concurrent clients, one-off writes) the floor is
measured just before.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any, Awaitable, Callable

from neo4j import AsyncDriver

FLOOR_QUERY = "RETURN 1"


@dataclass(frozen=True)
class Stats:
    n: int
    p50_ms: float
    p95_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float

    @classmethod
    def of(cls, seconds: list[float]) -> "Stats":
        if not seconds:
            raise ValueError("no samples")
        ms = sorted(s * 1000 for s in seconds)
        return cls(len(ms), percentile(ms, 50), percentile(ms, 95), sum(ms) / len(ms),
                   ms[0], ms[-1])

    def as_dict(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def percentile(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = (len(sorted_values) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


async def measure(fn: Callable[[], Awaitable[Any]], *, samples: int, warmup: int,
                  max_seconds: float | None = None) -> Stats:
    """Runs `fn` `warmup` times unmeasured, then up to `samples` times measured.

    `max_seconds` bounds the measured phase (at least 5 samples are always taken),
    so a slow case cannot blow the run's time budget; Stats.n says how many ran.
    """
    for _ in range(warmup):
        await fn()
    times: list[float] = []
    started = time.perf_counter()
    for _ in range(samples):
        t0 = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - t0)
        if max_seconds is not None and len(times) >= 5 and time.perf_counter() - started > max_seconds:
            break
    return Stats.of(times)


async def floor_block_times(driver: AsyncDriver, count: int) -> list[float]:
    """`count` floor round trips, timed back to back after 10 untimed ones (a ping right
    after a heavier call measures some of that call's after-effects too, ~1 ms here)."""
    for _ in range(10):
        await driver.execute_query(FLOOR_QUERY)
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        await driver.execute_query(FLOOR_QUERY)
        times.append(time.perf_counter() - t0)
    return times


async def measure_with_floor(driver: AsyncDriver, fn: Callable[[], Awaitable[Any]], *,
                             samples: int, warmup: int, max_seconds: float | None = None,
                             floor_block: int = 100) -> tuple[Stats, Stats]:
    """Like `measure`, bracketed by two blocks of floor round trips, one right before
    and one right after the operation's samples; the floor is the median of both.

    The floor pings of a block run back to back, as a floor should (a ping right after
    a heavier call measures some of that call's after-effects too, ~1 ms here); the two
    blocks follow the machine's load across the operation's samples.
    """
    async def block() -> list[float]:
        return await floor_block_times(driver, floor_block)

    for _ in range(warmup):
        await fn()
    floors = await block()
    times: list[float] = []
    started = time.perf_counter()
    for _ in range(samples):
        t0 = time.perf_counter()
        await fn()
        t1 = time.perf_counter()
        times.append(t1 - t0)
        if max_seconds is not None and len(times) >= 5 and t1 - started > max_seconds:
            break
    floors += await block()
    return Stats.of(times), Stats.of(floors)


async def measure_round_robin(driver: AsyncDriver, fns: dict[str, Callable[[], Awaitable[Any]]],
                              *, samples: int, warmup: int, floor_block: int = 100
                              ) -> tuple[dict[str, Stats], Stats]:
    """Several operations sampled in turn — one call of each per round, the order rotated
    every round — so that load drifting across the run hits them all alike and their
    ratios compare like with like. Bracketed by two floor blocks as in
    `measure_with_floor`; returns each operation's stats and the floor."""
    async def block() -> list[float]:
        return await floor_block_times(driver, floor_block)

    names = list(fns)
    for _ in range(warmup):
        for name in names:
            await fns[name]()
    floors = await block()
    times: dict[str, list[float]] = {name: [] for name in names}
    for i in range(samples):
        for name in names[i % len(names):] + names[:i % len(names)]:
            t0 = time.perf_counter()
            await fns[name]()
            times[name].append(time.perf_counter() - t0)
    floors += await block()
    return {name: Stats.of(t) for name, t in times.items()}, Stats.of(floors)


async def floor(driver: AsyncDriver, samples: int = 300, warmup: int = 50) -> Stats:
    async def ping() -> None:
        await driver.execute_query(FLOOR_QUERY)

    return await measure(ping, samples=samples, warmup=warmup)
