"""Workload 8: a peer side by side — LangGraph with its SQLite checkpointer vs ctxdag.

The same job on both: "a conversation with forks that I can resume".

- N turns, a turn being a user message and a deterministic assistant reply (no LLM:
  the text comes from bench/content.py on both sides). LangGraph: one `invoke` per
  turn of a one-node StateGraph whose state is a message list reduced by
  `add_messages`, checkpointed by `SqliteSaver` to a file. ctxdag: the service's turn,
  `Turns.send_message`, with a model (`PeerReplies`) that answers with the same
  deterministic reply: the user message, the prompt's render (what the model reads, as
  the LangGraph node reads its state; extended from the previous turn's render when it
  can be), the reply with its call and READ edges. Every turn runs on both sides; the
  windows before the points are timed (see run_ctxdag).
- Summarize every `peer_every` turns, keeping the last `peer_keep` messages verbatim.
  LangGraph, as its docs show: a `summarize` node behind a conditional edge returns
  the new summary and a `RemoveMessage` for every older message. ctxdag:
  `Compactor.compact` with the offline summarizer and a keep_recent_tokens that
  keeps the same messages. Both use the same summarizer text
  (service.context.summarizers.OfflineExtractiveSummarizer).
- Fork at N/2: a new version of a user message, then its reply — three times
  (turns N/2, N/2 + 1, N/2 + 2), since the first one pays for any replanning.
  LangGraph: `invoke` with the new message from the checkpoint that closed the turn
  before (a fork in the thread's checkpoint tree; the original history stays).
  ctxdag: `ledger.head.edit` on the turn's user node (HEAD moves onto the fork),
  render, append the reply.
- Read the head's context: LangGraph `get_state` (messages + summary); ctxdag
  `render_context`, at the main head and at the last fork's head. Then bytes stored
  per turn: the SQLite file (after a WAL checkpoint) vs the Neo4j store's growth
  (measured across clean restarts, which checkpoint; see bench/storage.py).
- ctxdag only, rolling: compacting a fork (a fourth one, off an earlier turn, so the
  three forks above stay uncompacted), and what the main head renders afterwards.
- ctxdag only, then the branch strategy on the same session
  (`ledger.sessions.update(sid, summary_strategy="branch")`: only rendering changes):
  the main head's and the last fork's context read, the fork compacted
  (`Compactor.compact(head_id=fork head)`), and the main head read again — it must render
  exactly what it rendered before (checked; the workload stops if not).
- Storage: the session's COVERS and ABSORBED edges after the 25 compactions, and the
  time of each compaction and of its persist (Ledger.summaries.persist, timed inside
  Compactor.compact).
"""
from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import Annotated, Any, Awaitable, Callable

from service.context.render import render_context
from service.context.summarizers import OfflineExtractiveSummarizer
from service.store import Database, Node, Role, open_driver
from service.turns.providers import ModelReply, Prompt
from service.turns.service import Turns
from service.model.ids import utcnow
from service.tokens import estimate_tokens

from .content import assistant_text, user_text
from .core import Bench
from .turn_floor import StoreFloor
from .server import BenchNeo4j
from .storage import checkpoint
from .timing import Stats, measure_round_robin

try:  # the bench extra: pip install -e '.[bench]'
    from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages
    from typing_extensions import TypedDict
except ImportError as missing:  # reported as the workload's error, the rest still runs
    LANGGRAPH_MISSING: ImportError | None = missing
else:
    LANGGRAPH_MISSING = None

    class PeerState(TypedDict, total=False):
        messages: Annotated[list[AnyMessage], add_messages]
        summary: str
        turn: int

S8 = "8 peer: LangGraph + SqliteSaver vs ctxdag"
OFFLINE_META = {"model": "offline-echo", "offline": True, "provider": "offline"}


class PeerReplies:
    """ctxdag's model in this workload: it answers with `next_text`, the reply LangGraph's
    `respond` node writes for the same turn, so both sides store the same messages."""

    name = "offline"
    model = "offline-echo"

    def __init__(self) -> None:
        self.next_text = ""

    async def complete(self, prompt: Prompt) -> ModelReply:
        return ModelReply(self.next_text, self.model, sum(n.tokens for n in prompt.nodes),
                          estimate_tokens(self.next_text), dict(OFFLINE_META))


def user_msg(turn: int) -> str:
    """Turn `turn` (from 1) is messages 2(turn-1) and 2turn-1 of bench/content.py."""
    return user_text(turn - 1)


def reply_msg(turn: int) -> str:
    return assistant_text(turn - 1)


def edited(turn: int) -> str:
    return "Edited. " + user_msg(turn)


def _summarize(previous: str | None, messages: list[tuple[str, str, str]]) -> str:
    """The service's offline summarizer over (id, role, content); it never awaits."""
    now = utcnow()
    nodes = [Node(id=i, session_id="peer", role=Role(role), content=content, created_at=now,
                  tokens=0, metadata={}, seq=0, depth=0, predecessor_id=None, caller_id=None,
                  side_branch=False, deleted_at=None) for i, role, content in messages]
    coroutine = OfflineExtractiveSummarizer().summarize(nodes, previous)
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value.text
    raise RuntimeError("the offline summarizer awaited something")


def fork_points(n: int) -> list[int]:
    """Three forks, each a new version of a user message: turns N/2, N/2 + 1, N/2 + 2."""
    return [n // 2, n // 2 + 1, n // 2 + 2]


def windows(times: dict[int, float], points: tuple[int, ...], window: int) -> dict[int, Stats]:
    out = {}
    for point in points:
        picked = [times[t] for t in range(max(1, point - window + 1), point + 1) if t in times]
        if picked:
            out[point] = Stats.of(picked)
    return out


# --- LangGraph -------------------------------------------------------------


def run_langgraph(path: Path, n: int, every: int, keep: int, points: tuple[int, ...],
                  window: int, read_samples: int) -> dict[str, Any]:
    def respond(state: PeerState) -> dict[str, Any]:
        # What a model would read: the summary, then the retained messages.
        context = ([("system", state["summary"])] if state.get("summary") else []) \
            + list(state["messages"])
        turn = state.get("turn", 0) + 1
        assert context  # the deterministic "model" reads its context and answers
        return {"messages": [AIMessage(reply_msg(turn))], "turn": turn}

    def route(state: PeerState) -> str:
        return "summarize" if state["turn"] % every == 0 else END

    def summarize(state: PeerState) -> dict[str, Any]:
        old = state["messages"][:-keep]
        text = _summarize(state.get("summary"), [
            (m.id, "user" if m.type == "human" else "assistant", m.content) for m in old])
        return {"summary": text, "messages": [RemoveMessage(id=m.id) for m in old]}

    builder = StateGraph(PeerState)
    builder.add_node("respond", respond)
    builder.add_node("summarize", summarize)
    builder.add_edge(START, "respond")
    builder.add_conditional_edges("respond", route, ["summarize", END])
    builder.add_edge("summarize", END)

    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    graph = builder.compile(checkpointer=SqliteSaver(conn))
    thread = {"configurable": {"thread_id": "bench"}}

    times: dict[int, float] = {}
    summarize_times: list[float] = []
    fork_turns = fork_points(n)
    fork_from: dict[int, dict] = {}
    for t in range(1, n + 1):
        if t in fork_turns:
            fork_from[t] = graph.get_state(thread).config  # the checkpoint closing turn t - 1
        t0 = time.perf_counter()
        graph.invoke({"messages": [HumanMessage(user_msg(t))]}, thread)
        dt = time.perf_counter() - t0
        (summarize_times.append(dt) if t % every == 0 else times.__setitem__(t, dt))
    main_head = graph.get_state(thread).config
    main_state = graph.get_state(main_head).values

    def read(config: dict) -> Callable[[], Any]:
        return lambda: graph.get_state(config).values

    main_read = _measure_sync(read(main_head), read_samples)

    fork_ms = []
    for t in fork_turns:
        t0 = time.perf_counter()
        graph.invoke({"messages": [HumanMessage(edited(t))]}, fork_from[t])
        fork_ms.append((time.perf_counter() - t0) * 1000)
    fork_head = graph.get_state(thread).config  # the thread's latest checkpoint: the last fork's
    fork_state = graph.get_state(fork_head).values
    messages = fork_state["messages"]
    last = fork_turns[-1]
    if (messages[-2].content != edited(last) or messages[-1].content != reply_msg(last)
            or fork_state["turn"] != last):
        raise RuntimeError("the LangGraph fork does not end with the edited turn")
    fork_read = _measure_sync(read(fork_head), read_samples)

    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    checkpoints = conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0]
    writes = conn.execute("SELECT count(*) FROM writes").fetchone()[0]
    conn.close()
    size = sum(os.path.getsize(str(path) + s) for s in ("", "-wal")
               if os.path.exists(str(path) + s))
    return {
        "turn": windows(times, points, window), "summarize": Stats.of(summarize_times),
        "main_read": main_read, "main_messages": len(main_state["messages"]),
        "fork_ms": fork_ms, "fork_read": fork_read,
        "fork_messages": len(messages), "bytes": size, "checkpoints": checkpoints,
        "writes": writes,
    }


def _measure_sync(fn: Callable[[], Any], samples: int) -> Stats:
    for _ in range(3):
        fn()
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return Stats.of(times)


# --- ctxdag ----------------------------------------------------------------


async def warm_up(b: Bench, rounds: int = 5) -> None:
    """After a restart the JVM is cold (plans and JIT-compiled code are gone): run the
    one-off steps (edit, render, append, compact) on throw-away sessions first, so
    those steps are timed warm."""
    for i in range(rounds):
        chain = await b.loader.chain(f"bench peer warm-up {i}", 40)
        for k in range(0, 6, 2):
            await b.ledger.head.edit(chain.ids[10 + k], "warm-up edit")
            await render_context(b.ledger, chain.session_id)
            await b.ledger.head.append_message(chain.session_id, "assistant", "warm-up reply")
        result = await b.runtime.compactor.compact(chain.session_id, keep_recent_tokens=1)
        if result.status.value != "COMPACTED":
            raise RuntimeError(f"warm-up compaction did not run: {result.message}")


class Stopped(RuntimeError):
    """The ctxdag side gave up (a step slower than Sizes.peer_step_limit_s); `partial`
    holds what it measured until then."""

    def __init__(self, message: str, partial: dict[str, Any]) -> None:
        super().__init__(message)
        self.partial = partial


def time_persists(ledger: Any) -> list[tuple[int, float]]:
    """Times each `Ledger.summaries.persist` that Compactor.compact makes (the one write
    of a compaction), with the number of turns it newly covers: a wrapper on this
    ledger's Summaries instance, bench-only."""
    persisted: list[tuple[int, float]] = []
    summaries = ledger.summaries
    original = summaries.persist

    async def persist(session_id: str, new_ids: Any, *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        result = await original(session_id, new_ids, *args, **kwargs)
        persisted.append((len(new_ids), time.perf_counter() - t0))
        return result

    summaries.persist = persist
    return persisted


def rolling_fork_point(n: int, every: int) -> int:
    """The turn a fourth fork edits, to be compacted under rolling: far enough above the
    forks at N/2 that its segment (all but the last messages) ends above the segment of
    the summary those forks inherit under the branch strategy (written at the last
    compaction before N/2, which keeps the turns after it)."""
    return n // 2 - 3 * every // 4


async def run_ctxdag(b: Bench, n: int, every: int, keep: int, points: tuple[int, ...],
                     window: int, read_samples: int) -> dict[str, Any]:
    """Every turn runs through the service, as LangGraph's do, and the windows before the
    points are timed: so the store grows by what N real turns write (each with its call and
    READ edges), and the timed turns run on a JVM as warm as a running service's (the store
    is measured across a restart before the first turn). Every compaction runs through
    Compactor.compact."""
    ledger, compactor = b.ledger, b.runtime.compactor
    replies = PeerReplies()
    turns = Turns(ledger, compactor, replies)
    persisted = time_persists(ledger)  # (turns newly covered, seconds) of every persist
    start = await checkpoint(b)
    # The restarted JVM is cold: a few turns on a throw-away session first (planning the
    # turn's statements took the first turn past the step limit under load); their ~12
    # nodes count in the store's growth (~0.01% of it at N = 5,000).
    warm = await b.loader.chain("bench peer turn warm-up", 2)
    for i in range(5):
        replies.next_text = reply_msg(i + 1)
        await turns.send_message(warm.session_id, user_msg(i + 1))
    sid = (await b.loader.new_chain("bench peer")).session_id
    floor = await StoreFloor.open(b)
    measured = {t for p in points for t in range(max(1, p - window + 1), p + 1)}
    times: dict[int, float] = {}
    floor_times: dict[int, float] = {}  # the store's floor, a round after each timed turn
    compactions: list[float] = []
    covered: list[int] = []  # turns the active summary covers after each compaction
    user_ids: dict[int, str] = {}
    tokens: list[int] = []  # token estimates of every message, in order

    def stop_if_slow(what: str, turn: int, seconds: float) -> None:
        """N turns cannot finish when one step takes minutes: stop, say where, and hand
        back what was measured until then."""
        if seconds > b.sizes.peer_step_limit_s:
            raise Stopped(
                f"{what} at turn {turn:,} took {seconds:.1f} s (more than "
                f"{b.sizes.peer_step_limit_s:.0f} s) with {len(tokens):,} messages in the "
                "session; the ctxdag side stopped there",
                {"turn": windows(times, points, window),
                 "floor": windows(floor_times, points, window),
                 "compactions_ms": [round(c * 1000, 1) for c in compactions],
                 "covered": covered,
                 "persists_ms": [round(p[1] * 1000, 1) for p in persisted],
                 "new_covered": [p[0] for p in persisted]})

    async def compact(head_id: str | None = None) -> Any:
        budget = sum(tokens[-keep:])  # keeps exactly the last `keep` messages
        result = await compactor.compact(sid, head_id=head_id, keep_recent_tokens=budget)
        if result.status.value != "COMPACTED":
            raise RuntimeError(f"compaction did not run: {result.message}")
        return result

    for t in range(1, n + 1):
        u, a = user_msg(t), reply_msg(t)
        tokens += [estimate_tokens(u), estimate_tokens(a)]
        replies.next_text = a
        t0 = time.perf_counter()
        turn = await turns.send_message(sid, u)
        elapsed = time.perf_counter() - t0
        if turn.reply is None:
            raise RuntimeError(f"turn {t} produced no reply: {turn.error}")
        if t in measured:
            times[t] = elapsed
            floor_times[t] = await floor.round(turn.call_id, u, a)
            if t in points:
                await floor.clear()
        stop_if_slow("a turn (Turns.send_message)", t, elapsed)
        user_ids[t] = turn.user_node.id
        if t % every == 0:
            t0 = time.perf_counter()
            result = await compact()
            compactions.append(time.perf_counter() - t0)
            stop_if_slow("Compactor.compact (render + summarize + persist)", t, compactions[-1])
            covered.append(result.covered_count)
        if t % 1000 == 0:
            b.log(f"{S8}: ctxdag at {t} turns")
    main_head = (await ledger.sessions.get(sid)).head_id
    counts = await b.loader.db.read("bench_session_counts", session_id=sid)
    now = await checkpoint(b)  # a restart: caches are cold after it
    stored = now["store"] - start["store"]
    stored_apparent = now["store_apparent"] - start["store_apparent"]
    await warm_up(b)
    main_view = await render_context(ledger, sid)
    main_read, main_floor = await b.timed(f"{S8} ctxdag main read",
                                          lambda: render_context(ledger, sid),
                                          samples=read_samples, warmup=3)

    fork_ms, fork_parts = [], []
    fork_head = main_head
    for t in fork_points(n):
        t0 = time.perf_counter()
        await ledger.head.edit(user_ids[t], edited(t))
        t1 = time.perf_counter()
        await render_context(ledger, sid)
        t2 = time.perf_counter()
        reply = await ledger.head.append_message(sid, "assistant", reply_msg(t),
                                                 metadata=OFFLINE_META)
        t3 = time.perf_counter()
        fork_head = reply.node.id
        fork_ms.append((t3 - t0) * 1000)
        fork_parts.append(f"edit {(t1 - t0) * 1000:.0f} + render {(t2 - t1) * 1000:.0f} + "
                          f"reply {(t3 - t2) * 1000:.0f}")
    fork_view = await render_context(ledger, sid, fork_head)
    fork_read, fork_floor = await b.timed(f"{S8} ctxdag fork read",
                                          lambda: render_context(ledger, sid, fork_head),
                                          samples=max(5, read_samples // 3), warmup=2,
                                          max_seconds=15)

    # Rolling keeps one active summary per session: compacting a fork supersedes the
    # main branch's summary. This runs on a fourth fork of its own, off an earlier turn
    # (rolling_fork_point): its summary's segment ends above the one the forks above
    # inherit under the branch strategy, so the branch rows below read the forks as
    # if it did not exist.
    t = rolling_fork_point(n, every)
    await ledger.head.edit(user_ids[t], edited(t))
    rolling_fork = (await ledger.head.append_message(sid, "assistant", reply_msg(t),
                                                     metadata=OFFLINE_META)).node.id
    rolling_fork_nodes = len((await render_context(ledger, sid, rolling_fork)).nodes)
    t0 = time.perf_counter()
    await compact(head_id=rolling_fork)
    fork_compact_s = time.perf_counter() - t0
    fork_after = await render_context(ledger, sid, rolling_fork)
    main_after = await render_context(ledger, sid, main_head)
    main_after_read, after_floor = await b.timed(
        f"{S8} ctxdag main read after fork compaction",
        lambda: render_context(ledger, sid, main_head),
        samples=max(5, read_samples // 3), warmup=2, max_seconds=15)

    # The branch strategy: the same session, only rendering changes.
    await ledger.sessions.update(sid, summary_strategy="branch")
    branch_main_view = await render_context(ledger, sid, main_head)
    branch_fork_view = await render_context(ledger, sid, fork_head)
    # The two heads are sampled in turn (one render of each per round), so their ratio
    # is not the machine's load moving between two blocks of samples.
    reads, branch_floor = await measure_round_robin(b.driver, {
        "main": lambda: render_context(ledger, sid, main_head),
        "fork": lambda: render_context(ledger, sid, fork_head)},
        samples=read_samples, warmup=3)
    b.floors.append({"around": f"{S8} ctxdag branch main + fork reads", **branch_floor.as_dict()})
    branch_main_read, branch_fork_read = reads["main"], reads["fork"]
    branch_main_floor = branch_fork_floor = branch_floor
    t0 = time.perf_counter()
    branch_compacted = await compact(head_id=fork_head)
    branch_compact_s = time.perf_counter() - t0
    branch_fork_after = await render_context(ledger, sid, fork_head)
    branch_main_after = await render_context(ledger, sid, main_head)
    if (branch_main_after.node_ids != branch_main_view.node_ids
            or branch_main_after.summary_id != branch_main_view.summary_id):
        raise RuntimeError(
            "branch strategy: compacting the fork changed what the main head renders: "
            f"{len(branch_main_view.nodes)} nodes with summary {branch_main_view.summary_id} "
            f"before, {len(branch_main_after.nodes)} with {branch_main_after.summary_id} after")
    branch_main_after_read, branch_after_floor = await b.timed(
        f"{S8} ctxdag branch main read after fork compaction",
        lambda: render_context(ledger, sid, main_head), samples=read_samples, warmup=3)
    violations = await ledger.violations(sid)
    if violations:
        raise RuntimeError(f"the peer session is unsound: {violations[:3]}")
    count_row = counts[0]
    return {
        "turn": windows(times, points, window), "floor": windows(floor_times, points, window),
        "summarize": Stats.of(compactions),
        "compactions_ms": [round(c * 1000, 1) for c in compactions], "covered": covered,
        "persists_ms": [round(p[1] * 1000, 1) for p in persisted[:len(compactions)]],
        "new_covered": [p[0] for p in persisted[:len(compactions)]],
        "main_read": main_read, "main_floor": main_floor, "main_nodes": len(main_view.nodes),
        "fork_ms": fork_ms, "fork_parts": fork_parts,
        "fork_read": fork_read, "fork_floor": fork_floor,
        "fork_nodes": len(fork_view.nodes), "bytes": stored, "bytes_apparent": stored_apparent,
        "rolling_fork_turn": t, "rolling_fork_nodes": rolling_fork_nodes,
        "fork_compact_ms": fork_compact_s * 1000, "fork_nodes_after": len(fork_after.nodes),
        "main_nodes_after": len(main_after.nodes), "main_after_read": main_after_read,
        "after_floor": after_floor,
        "branch_main_read": branch_main_read, "branch_main_floor": branch_main_floor,
        "branch_main_nodes": len(branch_main_view.nodes),
        "branch_main_same_as_rolling": branch_main_view.node_ids == main_view.node_ids,
        "branch_fork_read": branch_fork_read, "branch_fork_floor": branch_fork_floor,
        "branch_fork_nodes": len(branch_fork_view.nodes),
        "branch_fork_summary": branch_fork_view.summary_id,
        "branch_fork_summary_covers": await covers_count(ledger, branch_fork_view.summary_id),
        "branch_compact_ms": branch_compact_s * 1000,
        "branch_compact_covers": len(branch_compacted.summary.covers_ids),
        "branch_compact_new": persisted[-1][0],
        "branch_compact_persist_ms": round(persisted[-1][1] * 1000, 1),
        "branch_fork_nodes_after": len(branch_fork_after.nodes),
        "branch_main_after_read": branch_main_after_read,
        "branch_after_floor": branch_after_floor,
        "branch_main_nodes_after": len(branch_main_after.nodes),
        "counts": count_row,
    }


async def covers_count(ledger: Any, summary_id: str | None) -> int:
    if summary_id is None:
        return 0
    return len((await ledger.summaries.get(summary_id)).covers_ids)


async def on_fresh_neo4j(b: Bench, work: Callable[[Bench], Awaitable[dict[str, Any]]]
                         ) -> tuple[dict[str, Any], Stats]:
    """Runs `work` on a second managed Neo4j with an empty store, as the peer starts
    from an empty SQLite file: the store's growth is then the conversation's alone
    (on a store that already holds other data, preallocated file space blurs it).
    Returns what `work` returned and a floor measured on that Neo4j right after (a smoke
    run uses the bench's own Neo4j)."""
    if not b.sizes.isolated_stores:
        return await work(b), await b.floor(S8)
    neo = BenchNeo4j.start()
    driver = open_driver(neo.uri)
    try:
        await Database(driver).apply_schema()
        fresh = Bench.open(b.sizes, b.quick, neo, driver)
        fresh.started = b.started
        try:
            result = await work(fresh)
            base = await fresh.floor(S8)
        finally:
            logging.getLogger("neo4j.session").removeHandler(fresh.retries)
            b.floors.extend({"neo4j": "fresh (workload 8)", **f} for f in fresh.floors)
        retried = fresh.retries.snapshot()
        if retried:
            b.facts["peer_driver_retries"] = retried
        return result, base
    finally:
        await driver.close()
        neo.stop()


def turn_rows(b: Bench, cd: dict[str, Any], lg: dict[str, Any], base: Stats) -> None:
    """Both sides' append-a-turn rows at each measured point."""
    s = b.sizes
    for point in s.peer_points:
        for name, side in (("ctxdag", cd), ("LangGraph", lg)):
            if point in side["turn"]:
                how = ("Turns.send_message: the message, the prompt (extended from the last "
                       "turn's render, or rendered), the reply with its call and READ edges; "
                       if name == "ctxdag" else "")
                b.add(S8, f"{name}: append a turn at N={point:,}", side["turn"][point], base,
                      note=f"{how}turns {max(1, point - s.peer_window + 1)}–{point}, "
                           "summarizing turns excluded")
        if point in cd.get("floor", {}):
            b.add(S8, f"ctxdag: the store's floor for a turn at N={point:,}",
                  cd["floor"][point], base,
                  note="the writes the design requires as bare Cypher (bench/turn_floor.py): "
                       "the user's node, then the reply's node, its Call and a READ edge with "
                       "its position to every node the timed turn's call read; no checks, "
                       "lock or events; a round right after each timed turn")


def stopped_rows(b: Bench, cd: dict[str, Any], lg: dict[str, Any], base: Stats,
                 every: int) -> None:
    """The rows of a run whose ctxdag side stopped early: what both sides measured,
    and the stop itself as a failed row."""
    s = b.sizes
    turn_rows(b, cd, lg, base)
    comp, pers = cd["compactions_ms"], cd["persists_ms"]
    if comp:
        b.add(S8, f"ctxdag: summarize every {every} turns (until the stop)",
              Stats.of([v / 1000 for v in comp]), base,
              note=f"{len(comp)} compactions, in order, ms: "
                   + ", ".join(f"{v:.0f}" for v in comp)
                   + "; their persists: " + ", ".join(f"{v:.0f}" for v in pers),
              compactions_ms=comp, persists_ms=pers, covered=cd["covered"],
              new_covered=cd["new_covered"])
    b.add(S8, f"LangGraph: summarize every {every} turns", lg["summarize"], base,
          note="the invoke of a summarizing turn (respond + summarize nodes)")
    n = s.peer_turns
    b.add(S8, f"LangGraph: read head state at N={n:,}", lg["main_read"], base,
          note=f"get_state → summary + {lg['main_messages']} messages")
    b.add(S8, "LangGraph: fork at N/2 (invoke from a past checkpoint), 3 forks", None, base,
          value=round(sorted(lg["fork_ms"])[1], 1), unit="ms (median)",
          note="in order, ms: " + ", ".join(f"{v:.0f}" for v in lg["fork_ms"]),
          fork_ms=lg["fork_ms"])
    b.add(S8, "LangGraph: read the fork head's state", lg["fork_read"], base,
          note=f"summary + {lg['fork_messages']} messages")
    b.add(S8, f"LangGraph: bytes stored per turn (N={n:,})", None, None,
          value=round(lg["bytes"] / n), unit="bytes/turn",
          note=f"SQLite file {lg['bytes'] / 1e6:.1f} MB; {lg['checkpoints']:,} checkpoints, "
               f"{lg['writes']:,} writes", sqlite_bytes=lg["bytes"])
    b.add(S8, "ctxdag: the rest of the workload", None, base, status="failed", met=False,
          note=cd["stopped"])


async def peer(b: Bench) -> None:
    if LANGGRAPH_MISSING is not None:
        raise RuntimeError(f"LangGraph is not installed (the bench extra): {LANGGRAPH_MISSING}")
    s = b.sizes
    n, every, keep = s.peer_turns, s.peer_every, s.peer_keep
    b.log(f"{S8}: LangGraph, {n} turns")
    lg = await asyncio.to_thread(run_langgraph, b.neo.home / "langgraph.sqlite", n, every, keep,
                                 s.peer_points, s.peer_window, s.peer_read_samples)
    b.log(f"{S8}: ctxdag, {n} turns, on a fresh Neo4j")
    async def ctxdag_side(fresh: Bench) -> dict[str, Any]:
        try:
            return await run_ctxdag(fresh, n, every, keep, s.peer_points, s.peer_window,
                                    s.peer_read_samples)
        except Stopped as stop:
            return {"stopped": str(stop), **stop.partial}

    cd, base = await on_fresh_neo4j(b, ctxdag_side)
    if "stopped" in cd:
        stopped_rows(b, cd, lg, base, every)
        return
    turn_rows(b, cd, lg, base)
    comp, pers, new = cd["compactions_ms"], cd["persists_ms"], cd["new_covered"]
    half = len(comp) // 2

    def ms(values: list[float]) -> str:
        return ", ".join(f"{v:.0f}" for v in values)

    def median(values: list[float]) -> float:
        return Stats.of([v / 1000 for v in values]).p50_ms

    b.add(S8, f"ctxdag: summarize every {every} turns", cd["summarize"], base,
          note=f"Compactor.compact (render + summarize + persist); each summary's segment "
               f"grows (first {cd['covered'][0]:,} messages, last {cd['covered'][-1]:,}) but it "
               f"holds COVERS only to the messages it newly covers ({new[0]:,} first, then "
               f"{min(new[1:] or new):,}–{max(new[1:] or new):,}); first 3 took "
               f"{ms(comp[:3])} ms, last 3 {ms(comp[-3:])} ms; median of the first {half} "
               f"{median(comp[:half]):.0f} ms, of the last {half} {median(comp[-half:]):.0f} ms",
          compactions_ms=comp, covered=cd["covered"], new_covered=new)
    b.add(S8, f"ctxdag: the persist of each compaction ({len(pers)})",
          Stats.of([v / 1000 for v in pers]), base,
          note=f"Ledger.summaries.persist inside Compactor.compact; first 3 {ms(pers[:3])} ms, "
               f"last 3 {ms(pers[-3:])} ms; median of the first {half} "
               f"{median(pers[:half]):.0f} ms, of the last {half} {median(pers[-half:]):.0f} ms",
          persists_ms=pers, new_covered=new)
    b.add(S8, f"LangGraph: summarize every {every} turns", lg["summarize"], base,
          note="the invoke of a summarizing turn (respond + summarize nodes)")
    b.add(S8, f"ctxdag: read HEAD's context at N={n:,}", cd["main_read"], cd["main_floor"],
          note=f"render_context → {cd['main_nodes']} nodes (ROOT, summary, tail)")
    b.add(S8, f"LangGraph: read head state at N={n:,}", lg["main_read"], base,
          note=f"get_state → summary + {lg['main_messages']} messages")
    b.add(S8, "ctxdag: fork at N/2 (edit + render + reply), 3 forks", None, base,
          value=round(sorted(cd["fork_ms"])[1], 1), unit="ms (median)",
          note="in order, ms: " + "; ".join(cd["fork_parts"]), fork_ms=cd["fork_ms"])
    b.add(S8, "LangGraph: fork at N/2 (invoke from a past checkpoint), 3 forks", None, base,
          value=round(sorted(lg["fork_ms"])[1], 1), unit="ms (median)",
          note="in order, ms: " + ", ".join(f"{v:.0f}" for v in lg["fork_ms"]),
          fork_ms=lg["fork_ms"])
    b.add(S8, "ctxdag: read the fork head's context (rolling)", cd["fork_read"],
          cd["fork_floor"],
          note=f"{cd['fork_nodes']:,} nodes, verbatim: the session's one active summary "
               "covers main-branch turns the fork lacks")
    b.add(S8, "LangGraph: read the fork head's state", lg["fork_read"], base,
          note=f"summary + {lg['fork_messages']} messages (the fork inherits the summary "
               "of its checkpoint)")
    b.add(S8, "ctxdag: compact a fork (rolling)", None, base,
          value=round(cd["fork_compact_ms"], 1), unit="ms",
          note=f"one sample, on a fourth fork of its own (an edit of turn "
               f"{cd['rolling_fork_turn']:,}, so the branch rows' forks stay uncompacted), "
               f"which rendered {cd['rolling_fork_nodes']:,} nodes verbatim; it then renders "
               f"{cd['fork_nodes_after']} nodes; the main head renders "
               f"{cd['main_nodes_after']:,} (its summary was superseded)")
    b.add(S8, "ctxdag: read the main head after that compaction (rolling)",
          cd["main_after_read"], cd["after_floor"], note=f"{cd['main_nodes_after']:,} nodes")
    b.add(S8, "ctxdag, branch strategy: read the main head's context", cd["branch_main_read"],
          cd["branch_main_floor"],
          note=f"after sessions.update(summary_strategy='branch'): "
               f"{cd['branch_main_nodes']} nodes (ROOT, summary, tail), "
               + ("the same as under rolling" if cd["branch_main_same_as_rolling"]
                  else "NOT the nodes it rendered under rolling")
               + "; sampled in turn with the fork head's read")
    fork_rendered = (f"ROOT + the summary written before the fork (its segment: "
                     f"{cd['branch_fork_summary_covers']:,} messages) + the messages since"
                     if cd["branch_fork_summary"] else "verbatim: NO summary applied")
    b.add(S8, "ctxdag, branch strategy: read the fork head's context", cd["branch_fork_read"],
          cd["branch_fork_floor"],
          note=f"{cd['branch_fork_nodes']} nodes: {fork_rendered} (LangGraph: summary + "
               f"{lg['fork_messages']} messages); sampled in turn with the main head's read")
    fork_ratio = cd["branch_fork_read"].p50_ms / cd["branch_main_read"].p50_ms
    b.add(S8, "ctxdag, branch strategy: fork head / main head read (p50 ratio)", None, None,
          value=round(fork_ratio, 2), unit="×", target="≤ 2", met=fork_ratio <= 2,
          note=f"{cd['branch_fork_nodes']} vs {cd['branch_main_nodes']} nodes, "
               f"p50 {cd['branch_fork_read'].p50_ms:.1f} vs {cd['branch_main_read'].p50_ms:.1f} ms")
    b.add(S8, "ctxdag, branch strategy: compact the fork", None, base,
          value=round(cd["branch_compact_ms"], 1), unit="ms",
          note=f"one sample: Compactor.compact(head_id=fork head); {cd['branch_compact_new']} "
               f"messages newly covered (segment {cd['branch_compact_covers']:,}), persist "
               f"{cd['branch_compact_persist_ms']:.0f} ms; the fork then renders "
               f"{cd['branch_fork_nodes_after']} nodes")
    b.add(S8, "ctxdag, branch strategy: read the main head after the fork's compaction",
          cd["branch_main_after_read"], cd["branch_after_floor"],
          target="renders what it rendered before", met=True,
          note=f"{cd['branch_main_nodes_after']} nodes, the same ids and summary as before "
               "the fork's compaction (checked; the run stops if not)")
    counts = cd["counts"]
    b.add(S8, f"ctxdag: bytes stored per turn (N={n:,})", None, None,
          value=round(cd["bytes"] / n), unit="bytes/turn",
          note=f"Neo4j store growth {cd['bytes'] / 1e6:.1f} MB allocated "
               f"({cd['bytes_apparent'] / 1e6:.1f} MB apparent); {counts['nodes']:,} nodes, "
               f"{counts['covers']:,} COVERS, {counts['absorbed']:,} ABSORBED and "
               f"{counts['reads']:,} READ edges after {len(comp)} compactions",
          store_bytes=cd["bytes"], store_apparent_bytes=cd["bytes_apparent"], **counts)
    b.add(S8, f"LangGraph: bytes stored per turn (N={n:,})", None, None,
          value=round(lg["bytes"] / n), unit="bytes/turn",
          note=f"SQLite file {lg['bytes'] / 1e6:.1f} MB; {lg['checkpoints']:,} checkpoints, "
               f"{lg['writes']:,} writes (each checkpoint holds the whole message list)",
          sqlite_bytes=lg["bytes"], checkpoints=lg["checkpoints"], writes=lg["writes"])
    b.facts["peer"] = {"turns": n, "summarize_every": every, "keep_messages": keep}
