"""Workload 5: calls.reading(node) as the number of stored calls grows."""
from __future__ import annotations

import random

from service.store import CallRecord, Purpose
from service.model.ids import utcnow

from .core import Bench
from .profile import profile_of

S5 = "5 calls.reading(node)"
PROBED_BY = 3  # calls that read the probed node


async def reading(b: Bench) -> None:
    sizes = b.sizes
    chain = await b.loader.chain("bench reading", sizes.reading_session_nodes)
    probe = chain.ids[len(chain.ids) // 2]
    others = [i for i in chain.ids if i != probe]
    for i in range(PROBED_BY):  # the few calls that did read it, through the service
        now = utcnow()
        await b.ledger.calls.record(chain.session_id, CallRecord(
            Purpose.CHAT, "offline", "offline-echo", (chain.ids[0], probe, chain.ids[-1 - i]),
            now, now))
    rng = random.Random(5)
    stored = PROBED_BY
    p50: dict[int, float] = {}
    for total in sizes.reading_calls:
        more = total - stored
        read_sets = [rng.sample(others, sizes.reading_reads_per_call) for _ in range(more)]
        stored += await b.loader.calls(chain.session_id, read_sets)
        result = await b.ledger.calls.reading(probe)
        if len(result) != PROBED_BY:
            raise RuntimeError(f"calls.reading found {len(result)} calls, expected {PROBED_BY}")
        before = b.trips()
        stats, base = await b.timed(f"{S5} {total}", lambda: b.ledger.calls.reading(probe),
                                    samples=sizes.reading_samples, warmup=30)
        trips = (b.trips() - before) / (stats.n + 30)
        prof = await profile_of(b.db, "node_readers_page",
                                lambda: b.ledger.calls.reading(probe))
        ratio = stats.p50_ms / base.p50_ms
        p50[total] = stats.p50_ms
        b.add(S5, f"{stored:,} calls stored ({PROBED_BY} read the node)", stats, base,
              target="≤ 5× floor", met=ratio <= 5, round_trips=trips,
              note=f"db hits {prof['db_hits']:,}; other calls read "
                   f"{sizes.reading_reads_per_call} of {len(others)} other nodes each",
              profile=prof)
        b.log(f"{S5}: {stored} calls p50 {stats.p50_ms:.2f} ms = {ratio:.2f}× floor")
    if len(p50) > 1:
        small, large = min(p50), max(p50)
        b.add(S5, f"{large:,} / {small:,} calls (p50 ratio)", None, None,
              value=round(p50[large] / p50[small], 2), unit="×",
              note="flat means ≈ 1: the walk starts at the node and follows its READ edges")
    violations = await b.ledger.violations(chain.session_id)
    if violations:
        raise RuntimeError(f"the reading session is unsound: {violations[:3]}")
