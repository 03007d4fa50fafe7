"""Workload 15: branch summaries (docs/concepts/annotations.md).

For each history length H: a conversation of H turns, compacted but for its last
`compacted_tail` turns (as workload 1), with a fork of `carry_fork` turns off its tip's
neighbourhood. Measured:

- a carry-over of the fork into HEAD (Carrier.carry_over: the segment read, the offline
  summarizer, the one write) — its time, round trips and the turns it summarizes;
- HEAD's render after it (ROOT, the summary, the tail, the carry nodes): its time and
  its length, which must not grow with H;
- a carry-over of the whole H-turn branch into a fork from ROOT: what carrying a long
  branch costs (the segment walk and the summarizer read every turn of it), and the size
  of the node it writes (the offline summary is bounded: its target's render stays flat).
"""
from __future__ import annotations

import time

from service.context.carry import Carrier
from service.context.render import render_context
from service.context.summarizers import OfflineExtractiveSummarizer

from .core import Bench
from .render import compact_all_but_tail, render_rate

S15 = "15 branch summaries"


async def carry(b: Bench) -> None:
    sizes = b.sizes
    carrier = Carrier(b.ledger, OfflineExtractiveSummarizer())
    for history in sizes.carry_history:
        chain = await b.loader.chain(f"bench carry {history}", history)
        sid = chain.session_id
        await compact_all_but_tail(b, chain, sizes.compacted_tail)
        fork_point = chain.ids[-3]  # an assistant reply: the fork opens with a user turn
        at = fork_point
        for k in range(sizes.carry_fork):
            role = "user" if k % 2 == 0 else "assistant"
            at = (await b.ledger.head.append_message(
                sid, role, f"Fork turn {k}. Trying the other approach, step {k}.",
                predecessor_id=at)).node.id
        fork_tip = at
        before = await render_context(b.ledger, sid)

        carried: list[int] = []

        async def once() -> None:
            head = (await b.ledger.sessions.get(sid)).head_id
            done = await carrier.carry_over(sid, fork_tip, head)
            carried.append(len(done.carried.carried_ids))

        trips = b.trips()
        stats, base = await b.timed(f"carry {history}", once, samples=sizes.carry_samples,
                                    warmup=1)
        per_carry = (b.trips() - trips) / (stats.n + 1)
        b.add(S15, f"carry a {sizes.carry_fork}-turn fork into HEAD of a compacted "
                   f"{history}-turn history", stats, base, round_trips=round(per_carry, 1),
              value=carried[-1], unit="turns summarized",
              note="segment read + offline summarizer + one write (node, edges, call, events)")

        after = await render_context(b.ledger, sid)
        render, render_base, render_trips = await render_rate(
            b, f"render after carry {history}", sid, samples=sizes.compacted_samples, warmup=3)
        b.add(S15, f"render HEAD after {stats.n + 1} carry-overs, {history}-turn history",
              render, render_base, round_trips=round(render_trips, 1),
              value=len(after.nodes), unit="nodes rendered",
              note=f"{len(before.nodes)} nodes before the carry-overs; {after.tokens} tokens")

        root_fork = (await b.ledger.head.append_message(
            sid, "user", "Start over from the beginning.",
            predecessor_id=(await b.ledger.sessions.get(sid)).root_id)).node
        t0 = time.perf_counter()
        trips = b.trips()
        long = await carrier.carry_over(sid, chain.ids[-1], root_fork.id)
        seconds = time.perf_counter() - t0
        b.add(S15, f"carry the whole {history}-turn branch into a fork from ROOT", None, None,
              round_trips=b.trips() - trips, value=round(seconds * 1000, 1), unit="ms (one run)",
              note=f"{len(long.carried.carried_ids)} turns summarized; the carry node holds "
                   f"{long.carried.node.tokens} tokens; the fork renders "
                   f"{len((await render_context(b.ledger, sid, long.carried.node.id)).nodes)} "
                   "nodes")
