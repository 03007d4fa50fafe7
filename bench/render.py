"""Workloads 1 and 2: render_context from HEAD, compacted and uncompacted.

Workload 1 ends with the branch strategy: the 10,000-turn session's one summary read
under it, then a conversation of five branches with five summaries each (every one
written by Compactor.compact) whose heads must render as cheaply as the one summary.
"""
from __future__ import annotations

import asyncio
import time

from service.context.render import render_context
from service.context.summarizers import OfflineExtractiveSummarizer
from service.store import CallRecord, Purpose, Rendered
from service.model.ids import utcnow

from .content import message
from .core import Bench
from .loader import Chain, as_nodes
from .profile import profile, server_ms
from .timing import Stats, measure_round_robin

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


async def split(b: Bench, session_id: str, runs: int = 10) -> float:
    """Server-side ms of the render statement (see profile.server_ms)."""
    return await server_ms(b.db, "render_context", {
        "requests": [{"session_id": session_id, "head_id": None}], "tenant": b.tenant},
        runs=runs)


async def terminate_statement(b: Bench, name: str) -> int:
    """Stops the server-side transactions still running service statement `name` (a
    render the client gave up on would otherwise keep a core busy for minutes)."""
    text = b.db.queries[name].text
    records, _, _ = await b.driver.execute_query(
        "SHOW TRANSACTIONS YIELD transactionId, currentQuery "
        "WHERE currentQuery STARTS WITH $start RETURN transactionId", start=text[:300])
    ids = [r["transactionId"] for r in records]
    if ids:
        await b.driver.execute_query("TERMINATE TRANSACTIONS $ids", ids=ids)
    return len(ids)


async def compacted(b: Bench) -> None:
    sizes = b.sizes
    tail = sizes.compacted_tail
    p50: dict[int, float] = {}
    chains: dict[int, Chain] = {}
    for turns in sizes.compacted_turns:
        chain = await b.loader.chain(f"bench compacted {turns}", turns)
        chains[turns] = chain
        persist_s, persist_trips = await compact_all_but_tail(b, chain, tail)
        violations = await b.loader.verify(chain)
        if violations:
            raise RuntimeError(f"compacted session of {turns} turns is unsound: {violations[:3]}")
        # The first render is a probe: one that does not answer within chain_timeout_s is
        # reported FAILED (and stopped on the server), one slower than a second is sampled
        # for at most 25 s, so a slow render cannot hold the run for hours.
        base = await b.floor(f"{S1} {turns} probe")
        t0 = time.perf_counter()
        try:
            view = await asyncio.wait_for(render_context(b.ledger, chain.session_id),
                                          sizes.chain_timeout_s)
        except asyncio.TimeoutError:
            waited = time.perf_counter() - t0
            stopped = await terminate_statement(b, "render_context")
            b.add(S1, f"{turns:,} turns", None, base, status="failed", met=False,
                  target="≤ 3× floor",
                  note=f"no answer within {sizes.chain_timeout_s:.0f} s (the render was then "
                       f"terminated on the server: {stopped} transaction(s))",
                  waited_s=round(waited, 1), covered=turns - tail)
            b.log(f"{S1}: {turns} turns FAILED: no answer within {sizes.chain_timeout_s:.0f} s")
            continue
        probe_s = time.perf_counter() - t0
        if len(view.nodes) != tail + 2 or view.summary_id is None:
            raise RuntimeError(f"expected ROOT + summary + {tail} turns, got {len(view.nodes)}")
        if probe_s > 1.0:  # the first render may have paid for planning: look again
            t0 = time.perf_counter()
            try:
                await asyncio.wait_for(render_context(b.ledger, chain.session_id),
                                       sizes.chain_timeout_s)
            except asyncio.TimeoutError:
                await terminate_statement(b, "render_context")
            probe_s = time.perf_counter() - t0
        slow = probe_s > 1.0
        stats, base, trips = await render_rate(b, f"{S1} {turns}", chain.session_id,
                                               sizes.compacted_samples, 2 if slow else 30,
                                               max_seconds=25 if slow else None,
                                               timeout=sizes.chain_timeout_s)
        prof = await profile(b.db, "render_context", {
            "requests": [{"session_id": chain.session_id, "head_id": None}],
            "tenant": b.tenant})
        server = await split(b, chain.session_id, runs=3 if slow else 10)
        p50[turns] = stats.p50_ms
        ratio = stats.p50_ms / base.p50_ms
        b.add(S1, f"{turns:,} turns (renders {len(view.nodes)} nodes)", stats, base,
              target="≤ 3× floor", met=ratio <= 3, round_trips=trips,
              note=f"db hits {prof['db_hits']:,}; Neo4j-side {server:.0f} ms of the p50"
                   + (f"; a render took {probe_s:.1f} s, so sampled for at most 25 s"
                      if slow else ""),
              profile=prof, server_ms=server, compaction_persist_ms=round(persist_s * 1000, 1),
              compaction_persist_round_trips=persist_trips, covered=turns - tail)
        b.log(f"{S1}: {turns} turns p50 {stats.p50_ms:.2f} ms = {ratio:.2f}× floor")
    small, large = min(p50, default=0), max(p50, default=0)
    if small != large:
        growth = p50[large] / p50[small]
        b.add(S1, f"{large:,} / {small:,} turns (p50 ratio)", None, None, value=round(growth, 2),
              unit="×", target="≤ 1.5", met=growth <= 1.5,
              note="render cost must follow the retained tail, not the history")
    if sizes.branch_count:
        await branch_strategy(b, chains[max(chains)], p50.get(max(chains)))


async def branch_strategy(b: Bench, single: Chain, rolling_p50: float | None) -> None:
    """The branch strategy's renders against one summary's, in the same run.

    1. The largest session above (one summary, `compacted_tail` turns retained) switched
       to the branch strategy: the same nodes, chosen by the branch rule.
    2. A conversation of `branch_count` branches under the branch strategy, built with
       the bulk loader for the turns and Compactor.compact for every summary: branch 0
       grows from ROOT; branch k is an edit (ledger.head.edit) of a user turn
       `branch_fork_back` nodes above branch k-1's head, then grows. Each branch is
       compacted `branch_summaries` times, every `branch_nodes / branch_summaries` new
       nodes, keeping the last `compacted_tail` messages; each compaction relays the
       summary its head rendered (the fork's inherited one, then its own). Each head
       must render ROOT + its branch's last summary + the tail; its render time must
       follow that tail, not the number of summaries or the history above it.

    The six heads (the one-summary session's and the five branch heads) are sampled
    round robin (timing.measure_round_robin), so the ratio between them is not the
    machine's load drifting from one row to the next.
    """
    sizes = b.sizes
    tail = sizes.compacted_tail
    ledger = b.ledger
    await ledger.sessions.update(single.session_id, summary_strategy="branch")
    view = await render_context(ledger, single.session_id)
    if len(view.nodes) != tail + 2 or view.summary_id is None:
        raise RuntimeError(f"branch strategy, one summary: expected ROOT + summary + {tail} "
                           f"turns, got {len(view.nodes)} nodes (summary {view.summary_id})")
    built = await build_branches(b)
    heads = [(single.session_id, None, single.messages, view)] + [
        (built["session_id"], head, depth, v) for head, depth, v in built["heads"]]
    fns = {str(i): (lambda sid=sid, head=head: render_context(ledger, sid, head))
           for i, (sid, head, _, _) in enumerate(heads)}
    before = b.trips()
    warmup = 10
    stats, base = await measure_round_robin(b.driver, fns, samples=sizes.compacted_samples,
                                            warmup=warmup)
    b.floors.append({"around": f"{S1} branch strategy (round robin)", **base.as_dict()})
    trips = (b.trips() - before) / sum(st.n + warmup for st in stats.values())
    hits: list[int] = []
    for i, (sid, head, depth, v) in enumerate(heads):
        params = {"requests": [{"session_id": sid, "head_id": head}], "tenant": b.tenant}
        prof = await profile(b.db, "render_context", params)
        server = await server_ms(b.db, "render_context", params)
        st = stats[str(i)]
        if i == 0:
            case = (f"branch strategy, 1 summary, {depth:,} turns (renders {len(v.nodes)} "
                    "nodes)")
            note = (f"the {depth:,}-turn session above after "
                    f"sessions.update(summary_strategy='branch'); ")
        else:
            case = (f"branch strategy, {built['summaries']} summaries on "
                    f"{len(built['heads'])} branches: branch {i - 1}'s head (depth {depth:,}, "
                    f"renders {len(v.nodes)} nodes)")
            note = f"{built['nodes']:,} nodes in the session; "
            hits.append(prof["db_hits"])
        b.add(S1, case, st, base, round_trips=trips,
              note=note + f"db hits {prof['db_hits']:,}; Neo4j-side {server:.0f} ms of the p50; "
                          "sampled round robin with the other branch-strategy rows",
              profile=prof, server_ms=server, depth=depth)
        b.log(f"{S1}: {case}: p50 {st.p50_ms:.2f} ms = {st.p50_ms / base.p50_ms:.2f}× floor, "
              f"db hits {prof['db_hits']:,}")
        if i == 0:
            single_hits = prof["db_hits"]
    single_p50 = stats["0"].p50_ms
    worst = max(stats[str(i)].p50_ms for i in range(1, len(heads)))
    growth = worst / single_p50
    versus = (f"; against rolling's 1-summary render above: {worst / rolling_p50:.2f}×"
              if rolling_p50 else "")
    b.add(S1, "branch strategy: slowest branch head / 1 summary (p50 ratio)", None, None,
          value=round(growth, 2), unit="×", target="≤ 1.5", met=growth <= 1.5,
          note=f"{built['summaries']} summaries, {built['nodes']:,} nodes vs 1 summary, "
               f"{single.messages:,} turns, both {tail}-turn tails; db hits "
               f"{min(hits):,}–{max(hits):,} vs {single_hits:,}" + versus)


async def build_branches(b: Bench) -> dict:
    """The conversation of branch_strategy(), checked; returns its heads."""
    sizes = b.sizes
    tail, ledger, compactor = sizes.compacted_tail, b.ledger, b.runtime.compactor
    every = sizes.branch_nodes // sizes.branch_summaries
    chain = await b.loader.new_chain("bench branches")
    sid = chain.session_id
    await ledger.sessions.update(sid, summary_strategy="branch")
    heads: list[tuple[str, int, Rendered]] = []
    summaries: list[str] = []
    t0 = time.perf_counter()
    parent: Chain | None = None
    for k in range(sizes.branch_count):
        if parent is None:
            branch = chain
        else:
            at = len(parent.ids) - sizes.branch_fork_back
            at -= at % 2  # a user message (the loader alternates user, assistant from ROOT)
            role, content = message(at)
            edited = await ledger.head.edit(parent.ids[at], "Edited. " + content)
            branch = Chain(sid, parent.root_id, edited.node.id, head_depth=edited.node.depth,
                           messages=at + 1, ids=parent.ids[:at] + [edited.node.id],
                           tokens=parent.tokens[:at] + [edited.node.tokens])
            await b.loader.sync(branch)
        start = len(branch.ids) - (0 if parent is None else 1)  # the edit is the first new node
        for i in range(1, sizes.branch_summaries + 1):
            await b.loader.extend(branch, start + i * every - len(branch.ids))
            result = await compactor.compact(sid, head_id=branch.head_id,
                                             keep_recent_tokens=sum(branch.tokens[-tail:]))
            if result.status.value != "COMPACTED":
                raise RuntimeError(f"branch {k}: compaction did not run: {result.message}")
            summaries.append(result.summary.id)
            await b.loader.sync(branch)
        view = await render_context(ledger, sid, branch.head_id)
        if len(view.nodes) != tail + 2 or view.summary_id != summaries[-1]:
            raise RuntimeError(
                f"branch {k}: its head renders {len(view.nodes)} nodes with summary "
                f"{view.summary_id}; expected ROOT + its last summary {summaries[-1]} + "
                f"{tail} turns")
        heads.append((branch.head_id, branch.head_depth, view))
        parent = branch
    # Every head again, after all branches exist: a later branch changes no earlier render.
    for k, (head, _, view) in enumerate(heads):
        again = await render_context(ledger, sid, head)
        if again.node_ids != view.node_ids or again.summary_id != view.summary_id:
            raise RuntimeError(f"branch {k}: its head's render changed after later branches "
                               f"were compacted ({len(view.nodes)} → {len(again.nodes)} nodes, "
                               f"summary {view.summary_id} → {again.summary_id})")
    violations = await ledger.violations(sid)
    if violations:
        raise RuntimeError(f"the branched session is unsound: {violations[:3]}")
    counts = (await b.loader.db.read("bench_session_counts", session_id=sid))[0]
    b.facts["branch_conversation"] = {
        "build_seconds": round(time.perf_counter() - t0, 1), **counts,
        "summaries": len(summaries), "head_depths": [d for _, d, _ in heads]}
    b.log(f"{S1}: {len(heads)} branches, {len(summaries)} summaries, {counts['nodes']:,} nodes "
          f"built in {time.perf_counter() - t0:.1f} s")
    return {"session_id": sid, "heads": heads, "summaries": len(summaries),
            "nodes": counts["nodes"]}


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
