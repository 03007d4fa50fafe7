"""Workload 14: the compacted render with pins stays flat in history length.

For each size, a chain of that many turns is compacted (as workload 1 does: one summary
covering all but the last `compacted_tail` turns), then `pins_count` of its covered turns,
spread over the segment, are pinned. Every head must render ROOT + the summary + the
pinned turns + the tail. The heads are sampled round robin (timing.measure_round_robin), so
their ratios to each other and to the floor compare like with like: the render finds the
segment's pinned turns from the session's pins, so its time must follow the tail and the
pins, not the history above them.
"""
from __future__ import annotations

from service.context.render import render_context

from .core import Bench
from .loader import Chain
from .render import compact_all_but_tail, split
from .timing import measure_round_robin

S14 = "14 render from HEAD, compacted, with pins"


async def pinned_render(b: Bench) -> None:
    sizes = b.sizes
    tail, count = sizes.compacted_tail, sizes.pins_count
    chains: dict[int, Chain] = {}
    for turns in sizes.pins_turns:
        chain = await b.loader.chain(f"bench pins {turns}", turns)
        await compact_all_but_tail(b, chain, tail)
        covered = chain.ids[: len(chain.ids) - tail]
        step = max(1, len(covered) // count)
        for node_id in covered[::step][:count]:
            await b.ledger.pins.set(node_id, max_pinned_tokens=10**9)
        view = await render_context(b.ledger, chain.session_id)
        if len(view.nodes) != 2 + count + tail or view.summary_id is None:
            raise RuntimeError(f"expected ROOT + summary + {count} pins + {tail} turns, got "
                               f"{len(view.nodes)} nodes")
        chains[turns] = chain

    def render(chain: Chain):
        return lambda: render_context(b.ledger, chain.session_id)

    before = b.trips()
    stats, base = await measure_round_robin(
        b.driver, {str(turns): render(chain) for turns, chain in chains.items()},
        samples=sizes.compacted_samples, warmup=10)
    calls = sum(s.n for s in stats.values()) + 10 * len(chains)
    trips = (b.trips() - before) / calls
    b.floors.append({"around": S14, **base.as_dict()})
    p50 = {turns: stats[str(turns)].p50_ms for turns in chains}
    for turns, chain in chains.items():
        server = await split(b, chain.session_id, runs=5)
        ratio = p50[turns] / base.p50_ms
        b.add(S14, f"{turns:,} turns, {count} pins (renders {2 + count + tail} nodes)",
              stats[str(turns)], base, target="≤ 3× floor", met=ratio <= 3,
              round_trips=trips, note=f"Neo4j-side {server:.1f} ms of the p50",
              server_ms=server, pins=count, covered=turns - tail)
        b.log(f"{S14}: {turns} turns p50 {p50[turns]:.2f} ms = {ratio:.2f}× floor")
    small, large = min(p50, default=0), max(p50, default=0)
    if small != large:
        growth = p50[large] / p50[small]
        b.add(S14, f"{large:,} / {small:,} turns (p50 ratio)", None, None, value=round(growth, 2),
              unit="×", target="≤ 1.5", met=growth <= 1.5,
              note="with pins too, render cost must follow the tail and the pins")
