"""Workloads 3, 4 and 6: append at HEAD, send_message throughput, recording a call,
and compaction's persist."""
from __future__ import annotations

import asyncio
import time

from service.context.summarizers import OfflineExtractiveSummarizer
from service.errors import CtxdagError
from service.store import CallRecord, Purpose
from service.model.ids import new_id, utcnow
from service.store.problems import single_row
from service.tokens import estimate_tokens

from .content import message, user_text
from .core import Bench
from .loader import Chain, as_nodes
from .profile import profile, profile_of
from .timing import Stats

S3 = "3 append / send_message"
S4 = "4 record a call"
S6 = "6 compaction persist"


async def append_at_head(b: Bench, chains: dict[int, Chain]) -> None:
    """append_message at HEAD on chains of several lengths (the cost must not follow them)."""
    for nodes, chain in sorted(chains.items()):
        if nodes > 5_000:
            continue
        k = chain.messages

        async def append() -> None:
            nonlocal k
            role, content = message(k)
            k += 1
            meta = None if role == "user" else {"model": "offline-echo", "offline": True,
                                                 "provider": "offline"}
            appended = await b.ledger.head.append_message(chain.session_id, role, content,
                                                          metadata=meta)
            if not appended.head_moved:
                raise RuntimeError("an append at HEAD did not advance HEAD")

        before = b.trips()
        stats, base = await b.timed(f"{S3} append {nodes}", append,
                                    samples=b.sizes.append_samples, warmup=20)
        trips = (b.trips() - before) / (stats.n + 20)
        chain.messages = k
        prof = await _profile_append(b, chain.session_id)
        ratio = stats.p50_ms / base.p50_ms
        b.add(S3, f"append_message at HEAD, {nodes:,}-node history", stats, base,
              target="≤ 3× floor", met=ratio <= 3, round_trips=trips,
              note=f"db hits {prof.get('db_hits', '?'):,}" if "db_hits" in prof else "",
              profile=prof)
        b.log(f"{S3}: append at HEAD ({nodes} nodes) p50 {stats.p50_ms:.2f} ms = {ratio:.2f}× floor")
        violations = await b.ledger.violations(chain.session_id)
        if violations:
            raise RuntimeError(f"appends left the session unsound: {violations[:3]}")


async def write_floor(b: Bench) -> None:
    """The smallest committed write: one node, one transaction. Its distance from the
    floor is what any commit costs (the transaction log is forced to disk)."""
    async def create() -> None:
        await b.driver.execute_query("CREATE (:BenchWriteProbe {at: timestamp()})")

    stats, base = await b.timed(f"{S3} write floor", create, samples=b.sizes.append_samples,
                                warmup=20)
    b.add(S3, "a trivial write: CREATE one node (execute_query)", stats, base,
          note="what a commit adds to the floor; append_message pays it too")
    await b.driver.execute_query("MATCH (n:BenchWriteProbe) DELETE n")


async def _profile_append(b: Bench, session_id: str) -> dict:
    role, content = message(0)
    return await profile_of(b.db, "append_message",
                            lambda: b.ledger.head.append_message(session_id, role, content))


async def send_messages(b: Bench) -> None:
    """Turns.send_message with the offline provider: 1 client; 8 on 8 sessions; 8 on one."""
    turns = b.runtime.turns
    seconds = b.sizes.send_seconds
    for label, clients, sessions in (("1 client, 1 session", 1, 1),
                                     ("8 clients, 8 sessions", 8, 8),
                                     ("8 clients, 1 session", 8, 1)):
        chains = [await b.loader.chain(f"bench send {label} {i}", b.sizes.send_history)
                  for i in range(sessions)]
        counter = 0
        failures: dict[str, int] = {}

        async def send(session_id: str) -> float | None:
            """One turn; a turn the service refuses is counted by its error code."""
            nonlocal counter
            counter += 1
            t0 = time.perf_counter()
            try:
                result = await turns.send_message(session_id, user_text(100_000 + counter))
            except CtxdagError as error:
                key = f"{error.code}: {error.message}"[:160]
                failures[key] = failures.get(key, 0) + 1
                return None
            if result.reply is None:
                raise RuntimeError(f"send_message produced no reply: {result.error}")
            return time.perf_counter() - t0

        for i in range(clients):  # warm-up, unmeasured
            await send(chains[i % sessions].session_id)
        failures.clear()
        base = await b.floor(f"{S3} send {label}")
        latencies: list[float] = []
        before = b.trips()
        started = time.perf_counter()
        deadline = started + seconds

        async def client(i: int) -> None:
            session_id = chains[i % sessions].session_id
            while time.perf_counter() < deadline:
                latency = await send(session_id)
                if latency is not None:
                    latencies.append(latency)

        async with asyncio.TaskGroup() as group:  # one client's crash stops the others
            for i in range(clients):
                group.create_task(client(i))
        elapsed = time.perf_counter() - started
        stats = Stats.of(latencies)
        rate = len(latencies) / elapsed
        trips = (b.trips() - before) / (len(latencies) + sum(failures.values()))
        for chain in chains:
            violations = await b.ledger.violations(chain.session_id)
            if violations:
                raise RuntimeError(f"send_message left {chain.session_id} unsound: {violations[:3]}")
        failed = sum(failures.values())
        b.add(S3, f"Turns.send_message (offline provider), {label}", stats, base,
              value=round(rate, 1), unit="turns/s", round_trips=round(trips, 2),
              target="every turn answered" if failed else "", met=False if failed else None,
              note=f"{rate:.1f} turns/s over {elapsed:.1f} s; sessions start with "
                   f"{b.sizes.send_history} messages"
                   + (f"; {failed} turns FAILED: " + "; ".join(
                       f"{n}× {why}" for why, n in failures.items()) if failed else ""),
              turns=len(latencies), failed_turns=failures, seconds=round(elapsed, 2),
              clients=clients, sessions=sessions)
        b.log(f"{S3}: send_message {label}: {rate:.1f} turns/s, p50 {stats.p50_ms:.1f} ms")


async def record_call(b: Bench, chain: Chain) -> None:
    """Ledger.calls.record with a prompt of `record_reads` nodes (the chain's latest)."""
    reads = tuple(chain.ids[-b.sizes.record_reads:])
    session_id = chain.session_id

    def record() -> CallRecord:
        now = utcnow()
        return CallRecord(Purpose.CHAT, "offline", "offline-echo", reads, now, now,
                          head_id=reads[-1], input_tokens=100_000, output_tokens=100)

    async def api() -> None:
        call = await b.ledger.calls.record(session_id, record())
        if call.read_count != len(reads):
            raise RuntimeError(f"recorded {call.read_count} reads of {len(reads)}")

    async def write_only() -> None:
        await b.db.write("call_record", single_row(session_id, {"session_id": session_id}),
                         session_id=session_id, tenant=b.tenant, call=record().as_param(),
                         now=utcnow())

    n = b.sizes.record_reads
    before = b.trips()
    stats, base = await b.timed(f"{S4} api", api, samples=b.sizes.record_samples, warmup=3)
    trips = (b.trips() - before) / (stats.n + 3)
    prof = await profile(b.db, "call_record", {"session_id": session_id, "tenant": b.tenant,
                                               "call": record().as_param(), "now": utcnow()})
    ratio = stats.p50_ms / base.p50_ms
    b.add(S4, f"Ledger.calls.record, {n:,} reads", stats, base, target="≤ 20× floor",
          met=ratio <= 20, round_trips=trips,
          note=("the write alone" if trips == 1 else f"{trips:.0f} round trips: the write and a "
                 "read-back") + f"; db hits of the write {prof['db_hits']:,}",
          profile=prof)
    b.log(f"{S4}: record {n} reads p50 {stats.p50_ms:.1f} ms = {ratio:.1f}× floor")
    try:
        stats, base = await b.timed(f"{S4} write", write_only,
                                    samples=b.sizes.record_samples, warmup=3)
        b.add(S4, f"call_record statement alone, {n:,} reads", stats, base, round_trips=1,
              note="the one write transaction, through Database.write")
    except Exception as e:  # noqa: BLE001 - internal signature may have changed
        b.add(S4, f"call_record statement alone, {n:,} reads", None, None, status="skipped",
              note=f"{type(e).__name__}: {e}")


async def persist(b: Bench) -> None:
    """Ledger.summaries.persist covering `persist_covered` turns, in one transaction."""
    covered = b.sizes.persist_covered
    warm = await b.loader.chain("bench persist warm-up", 200)
    await _persist_once(b, warm, 150, with_call=True)
    await _persist_once(b, await b.loader.chain("bench persist warm-up 2", 200), 150,
                        with_call=False)
    prof = await _profile_persist(b)
    top = ", ".join(f"{o['operator']} {o['db_hits']:,}" for o in prof.get("top_operators", [])[:2])
    for label, with_call in ((f"as Compactor writes it (+ summarize call, {covered:,} READ edges)",
                              True),
                             ("summary and COVERS edges only (no call)", False)):
        times, trips = [], []
        for i in range(b.sizes.persist_samples):
            chain = await b.loader.chain(f"bench persist {i}", covered + 40)
            seconds, round_trips = await _persist_once(b, chain, covered, with_call)
            times.append(seconds)
            trips.append(round_trips)
        base = await b.floor(f"{S6} {label}")
        stats = Stats.of(times)
        b.add(S6, f"persist, {covered:,} covered, {label}", stats, base,
              target="one transaction", met=all(t == 1 for t in trips),
              round_trips=sum(trips) / len(trips),
              note=f"{stats.n} sessions of {covered + 40:,} nodes, one persist each; "
                   f"PROFILE of a 150-turn persist: db hits {prof.get('db_hits', '?'):,} "
                   f"({top}) with {prof.get('nodes_in_database', '?'):,} nodes in the database",
              profile=prof)
        b.log(f"{S6}: persist {covered} ({label}) p50 {stats.p50_ms:.0f} ms")


async def _profile_persist(b: Bench) -> dict:
    """PROFILE (rolled back) of a small persist: what it reads besides its own turns."""
    chain = await b.loader.chain("bench persist profile", 200)
    ids = chain.ids[:150]
    written = await OfflineExtractiveSummarizer().summarize(as_nodes(chain, 150), None)
    prof = await profile_of(b.db, "summary_persist", lambda: b.ledger.summaries.persist(
        chain.session_id, ids, written.text, absorbed_id=None, compacted_head_id=ids[-1],
        retained_ids=[], expected_version=0, metadata={"summarizer": written.summarizer}))
    rows = await b.driver.execute_query("MATCH (n:Node) RETURN count(n) AS n")
    prof["nodes_in_database"] = rows.records[0]["n"]
    return prof


async def _persist_once(b: Bench, chain: Chain, covered: int, with_call: bool
                        ) -> tuple[float, int]:
    ids = chain.ids[:covered]
    written = await OfflineExtractiveSummarizer().summarize(as_nodes(chain, covered), None)
    now = utcnow()
    call = (CallRecord(Purpose.SUMMARIZE, written.summarizer, written.model, tuple(ids), now,
                       now) if with_call else None)
    before = b.trips()
    t0 = time.perf_counter()
    summary = await b.ledger.summaries.persist(
        chain.session_id, ids, written.text, absorbed_id=None, compacted_head_id=ids[-1],
        retained_ids=[], expected_version=0,
        metadata={"summarizer": written.summarizer, "trigger": "manual"}, call=call)
    seconds = time.perf_counter() - t0
    round_trips = b.trips() - before
    if len(summary.covers_ids) != covered:
        raise RuntimeError(f"summary covers {len(summary.covers_ids)} of {covered}")
    violations = await b.ledger.violations(chain.session_id)
    if violations:
        raise RuntimeError(f"persist left the session unsound: {violations[:3]}")
    return seconds, round_trips
