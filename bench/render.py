"""Workloads 1 and 2: render_context from HEAD, compacted and uncompacted."""
from __future__ import annotations

import asyncio
import time

from service.context.render import render_context
from service.context.summarizers import OfflineExtractiveSummarizer
from service.store import CallRecord, Purpose
from service.store.ids import utcnow

from .core import Bench
from .loader import Chain, as_nodes
from .profile import profile, server_ms
from .timing import Stats

S1 = "1 render from HEAD, compacted"
S2 = "2 render, uncompacted chain"


async def compact_all_but_tail(b: Bench, chain: Chain, tail: int) -> tuple[float, int]:
    """Makes the active summary cover every turn but the last `tail` (one persist, as
    Compactor writes it: summary text from the offline summarizer, its call recorded)."""
    covered = chain.ids[: len(chain.ids) - tail]
    written = await OfflineExtractiveSummarizer().summarize(as_nodes(chain, len(covered)), None)
    now = utcnow()
    call = CallRecord(Purpose.SUMMARIZE, written.summarizer, written.model, tuple(covered),
                      now, now)
    before = b.trips()
    t0 = time.perf_counter()
    await b.ledger.summaries.persist(
        chain.session_id, covered, written.text, absorbed_id=None,
        compacted_head_id=chain.ids[-1], retained_ids=chain.ids[len(covered):],
        expected_version=0,
        metadata={"summarizer": written.summarizer, "trigger": "manual"}, call=call)
    return time.perf_counter() - t0, b.trips() - before


async def render_rate(b: Bench, label: str, session_id: str, samples: int, warmup: int,
                      max_seconds: float | None = None, timeout: float | None = None
                      ) -> tuple[Stats, Stats, float]:
    """render_context from HEAD: its stats, the interleaved floor, round trips per render."""
    async def once() -> None:
        if timeout is None:
            await render_context(b.ledger, session_id)
        else:
            await asyncio.wait_for(render_context(b.ledger, session_id), timeout)

    before = b.trips()
    stats, base = await b.timed(label, once, samples=samples, warmup=warmup,
                                max_seconds=max_seconds)
    return stats, base, (b.trips() - before) / (stats.n + warmup)


async def split(b: Bench, session_id: str) -> float:
    """Server-side ms of the render statement (see profile.server_ms)."""
    return await server_ms(b.db, "render_context", {
        "requests": [{"session_id": session_id, "head_id": None}], "tenant": b.tenant})


async def compacted(b: Bench) -> None:
    sizes = b.sizes
    tail = sizes.compacted_tail
    p50: dict[int, float] = {}
    for turns in sizes.compacted_turns:
        chain = await b.loader.chain(f"bench compacted {turns}", turns)
        persist_s, persist_trips = await compact_all_but_tail(b, chain, tail)
        violations = await b.loader.verify(chain)
        if violations:
            raise RuntimeError(f"compacted session of {turns} turns is unsound: {violations[:3]}")
        view = await render_context(b.ledger, chain.session_id)
        if len(view.nodes) != tail + 2 or view.summary_id is None:
            raise RuntimeError(f"expected ROOT + summary + {tail} turns, got {len(view.nodes)}")
        stats, base, trips = await render_rate(b, f"{S1} {turns}", chain.session_id,
                                               sizes.compacted_samples, 30)
        prof = await profile(b.db, "render_context", {
            "requests": [{"session_id": chain.session_id, "head_id": None}],
            "tenant": b.tenant})
        server = await split(b, chain.session_id)
        p50[turns] = stats.p50_ms
        ratio = stats.p50_ms / base.p50_ms
        b.add(S1, f"{turns:,} turns (renders {len(view.nodes)} nodes)", stats, base,
              target="≤ 3× floor", met=ratio <= 3, round_trips=trips,
              note=f"db hits {prof['db_hits']:,}; Neo4j-side {server:.0f} ms of the p50",
              profile=prof, server_ms=server, compaction_persist_ms=round(persist_s * 1000, 1),
              compaction_persist_round_trips=persist_trips, covered=turns - tail)
        b.log(f"{S1}: {turns} turns p50 {stats.p50_ms:.2f} ms = {ratio:.2f}× floor")
    small, large = min(p50), max(p50)
    if small != large:
        growth = p50[large] / p50[small]
        b.add(S1, f"{large:,} / {small:,} turns (p50 ratio)", None, None, value=round(growth, 2),
              unit="×", target="≤ 1.5", met=growth <= 1.5,
              note="render cost must follow the retained tail, not the history")


def stack_overflows(b: Bench) -> int:
    log = b.neo.home / "logs" / "debug.log"
    try:
        return log.read_text(errors="replace").count("StackOverflowError")
    except FileNotFoundError:
        return 0


async def _failed(b: Bench, case: str, error: Exception, waited: float, overflows: int,
                  base: Stats, target: str) -> None:
    await asyncio.sleep(1)  # let Neo4j's log catch up
    new_overflows = stack_overflows(b) - overflows
    reason = (f"no answer within {b.sizes.chain_timeout_s:.0f} s"
              if isinstance(error, asyncio.TimeoutError)
              else f"{type(error).__name__}: {error}")
    if new_overflows:
        reason += ("; Neo4j's debug.log shows java.lang.StackOverflowError in "
                   "ListValue$AppendList.value while it encodes the result, and the server "
                   "could not send the error back (NullPointerException: payload cannot be "
                   "null), so the client waits until the transaction times out")
    b.add(S2, case, None, base, status="failed", met=False, target=target, note=reason,
          waited_s=round(waited, 1), stack_overflow_errors=new_overflows)
    b.log(f"{S2}: {case} FAILED ({reason[:90]}...)")


async def uncompacted(b: Bench, reuse: dict[int, Chain]) -> dict[int, Chain]:
    """Renders verbatim chains; returns the chains (workload 3 appends to them next)."""
    sizes = b.sizes
    chains: dict[int, Chain] = {}
    ok: dict[int, float] = {}
    for nodes in sizes.chain_nodes:
        chain = reuse.get(nodes) or await b.loader.chain(f"bench chain {nodes}", nodes)
        violations = await b.loader.verify(chain)
        if violations:
            raise RuntimeError(f"chain of {nodes} nodes is unsound: {violations[:3]}")
        chains[nodes] = chain
        samples = sizes.chain_samples_for(nodes)
        base = await b.floor(f"{S2} {nodes}")  # replaced by the interleaved floor below
        overflows = stack_overflows(b)
        t0 = time.perf_counter()
        try:
            # The first render is the probe: a failure is reported, not waited out.
            first = await asyncio.wait_for(render_context(b.ledger, chain.session_id),
                                           sizes.chain_timeout_s)
            if len(first.nodes) != nodes + 1:
                raise RuntimeError(f"rendered {len(first.nodes)} of {nodes + 1} nodes")
            stats, base, trips = await render_rate(b, f"{S2} {nodes}", chain.session_id,
                                                   samples, warmup=2 if nodes >= 1000 else 10,
                                                   max_seconds=25,
                                                   timeout=sizes.chain_timeout_s)
        except Exception as error:  # noqa: BLE001 - a failure is a measurement too
            await _failed(b, f"{nodes:,} nodes", error, time.perf_counter() - t0, overflows,
                          base, "one round trip")
            continue
        prof = await profile(b.db, "render_context", {
            "requests": [{"session_id": chain.session_id, "head_id": None}],
            "tenant": b.tenant})
        server = await split(b, chain.session_id)
        ok[nodes] = stats.p50_ms
        b.add(S2, f"{nodes:,} nodes", stats, base, target="one round trip",
              met=trips == 1, round_trips=trips,
              note=f"db hits {prof['db_hits']:,}; Neo4j-side {server:.0f} ms of the p50",
              profile=prof, server_ms=server)
        b.log(f"{S2}: {nodes} nodes p50 {stats.p50_ms:.1f} ms = "
              f"{stats.p50_ms / base.p50_ms:.1f}× floor, {trips:.2f} round trips")
    if 1000 in ok and max(ok) > 1000:
        large = max(ok)
        per_k = (ok[large] - ok[1000]) / ((large - 1000) / 1000)
        base = await b.floor(f"{S2} growth")
        b.add(S2, f"growth per 1,000 nodes (1,000 → {large:,})", None, None,
              value=round(per_k, 2), unit="ms / 1k nodes",
              note=f"= {per_k / base.p50_ms:.1f}× floor per 1,000 nodes")
    if sizes.chain_limit_probe:
        await limit_probe(b, sizes.chain_limit_probe)
    return chains


async def limit_probe(b: Bench, nodes: int) -> None:
    """One render of a longer chain: where the verbatim render stops answering at all."""
    chain = await b.loader.chain(f"bench chain probe {nodes}", nodes)
    base = await b.floor(f"{S2} probe {nodes}")
    overflows = stack_overflows(b)
    case = f"limit probe: {nodes:,} nodes, one render"
    t0 = time.perf_counter()
    try:
        view = await asyncio.wait_for(render_context(b.ledger, chain.session_id),
                                      b.sizes.chain_timeout_s)
    except Exception as error:  # noqa: BLE001 - the failure is the finding
        await _failed(b, case, error, time.perf_counter() - t0, overflows, base,
                      "answers (any time)")
        return
    seconds = time.perf_counter() - t0
    b.add(S2, case, None, base, value=round(seconds * 1000, 1), unit="ms",
          target="answers (any time)", met=len(view.nodes) == nodes + 1,
          note=f"rendered {len(view.nodes):,} nodes")
