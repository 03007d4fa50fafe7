"""API-level rows: the place for the GraphQL benchmarks, added with the API.

Each entry names a row the table already shows as "pending: API". To add one, write
an async function taking the Bench (bench/core.py) that measures the operation
through the API the way the other workloads measure the store — warm up, sample
with `timing.measure`, divide by a floor taken just before (`b.floor(...)`) — and
record it with `b.add(S9, case, stats, base, ...)`; then put it in place of None.
"""
from __future__ import annotations

from typing import Awaitable, Callable

from .core import Bench

S9 = "9 API (GraphQL)"

Workload = Callable[[Bench], Awaitable[None]]

API_WORKLOADS: dict[str, Workload | None] = {
    "sendMessage via GraphQL": None,
    "GraphQL session.graph": None,
}


async def api(b: Bench) -> None:
    for case, workload in API_WORKLOADS.items():
        if workload is None:
            b.add(S9, case, None, None, status="pending: API",
                  note="to be added with the API benchmarks (bench/api.py)")
        else:
            await workload(b)
