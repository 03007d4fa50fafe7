"""Spec §2 (storage of a summary) and §4 (the pipeline, its events and triggers)."""
import asyncio

import pytest

from service.context.budget import BudgetPolicy
from service.context.compaction import CompactionStatus
from service.context.summarizers import OfflineExtractiveSummarizer
from service.errors import ContextOverflow, ModelUnavailable
from service.store import Role
from tests.integration.helpers import (
    KEEP_FOUR, assert_sound, chat, head_id, make_compactor, rendered, snapshot, turns,
    without_event_counters,
)


def drain(queue):
    events = []
    while not queue.empty():
        events.append(queue.get_nowait())
    return events


async def graph_without(ledger, session_id, summary_id):
    """Every node and edge of the session except the summary node and its own edges."""
    rows, _, _ = await ledger.db.driver.execute_query(
        "MATCH (n:Node {session_id: $sid}) WHERE n.id <> $summary "
        "RETURN n.id AS id, properties(n) AS props, "
        "[(n)-[r]->(m) | [type(r), m.id, properties(r)]] AS out ORDER BY n.seq",
        sid=session_id, summary=summary_id)
    return [(r["id"], r["props"], sorted(map(str, r["out"]))) for r in rows]


async def test_compaction_writes_one_node_and_changes_nothing_else(ledger, compactor):
    session = await ledger.sessions.create("c", "sys")
    nodes = await chat(ledger, session, *turns(8))
    before = await graph_without(ledger, session.id, "none")
    result = await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
    summary = result.summary
    assert result.status is CompactionStatus.COMPACTED
    # One node: the summary, spliced after the segment's predecessor (ROOT here).
    assert summary.node.role is Role.SUMMARY
    assert summary.node.predecessor_id == session.root_id
    assert await graph_without(ledger, session.id, summary.id) == before  # no clones, no edge changes
    # HEAD does not move; the tail keeps its ids.
    assert await head_id(ledger, session.id) == nodes[-1].id
    assert await rendered(ledger, session.id) == [session.root_id, summary.id] + [
        n.id for n in nodes[4:]]
    # ids, not seq ranges: no range form is stored anywhere.
    assert "covers" not in summary.node.metadata
    assert summary.covers_ids == tuple(n.id for n in nodes[:4])
    assert summary.node.metadata["summarizer"] == "offline-extractive"
    stored = await ledger.sessions.get(session.id)
    assert stored.extra_meta["_last_summary_id"] == summary.id
    assert stored.extra_meta["_last_summary_text"] == summary.content
    await assert_sound(ledger, session.id)


async def test_coverage_follows_ids_not_interleaved_seqs(ledger, compactor):
    session = await ledger.sessions.create()
    u0, a0 = await chat(ledger, session, *turns(2))
    sibling = await ledger.head.append_message(session.id, "assistant", "a sibling reply",
                                               predecessor_id=u0.id)  # seq between the two
    rest = await chat(ledger, session, *turns(6, start=2))
    summary = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    assert sibling.node.id not in summary.covers_ids
    assert summary.covers_ids == (u0.id, a0.id, rest[0].id, rest[1].id)


async def test_recompaction_absorbs_the_summary_and_extends_its_coverage(ledger, compactor):
    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *turns(8))
    first = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    more = await chat(ledger, session, *turns(4, start=8))
    second = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    assert second.covers_ids == first.covers_ids + tuple(n.id for n in nodes[4:])
    covered = await ledger.nodes.get_many(second.covers_ids)
    assert len(covered) == 8 and all(n.role is not Role.SUMMARY for n in covered)
    # The previous summary's text is relayed: nothing it held is lost.
    for line in first.content.splitlines()[1:]:
        assert line in second.content
    assert (await ledger.summaries.get(first.id)).superseded
    assert not (await ledger.summaries.get(second.id)).superseded
    stored = await ledger.sessions.get(session.id)
    assert stored.extra_meta["_last_summary_id"] == second.id
    assert await rendered(ledger, session.id) == [session.root_id, second.id] + [
        n.id for n in more]
    await assert_sound(ledger, session.id)


async def test_fewer_than_four_entries_short_circuits_and_writes_nothing(ledger, compactor,
                                                                         events):
    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(3))
    before = await snapshot(ledger, session.id)
    with events.subscribe(session.id) as queue:
        result = await compactor.compact(session.id, keep_recent_tokens=0)
    assert result.status is CompactionStatus.SKIPPED
    assert result.local_command and "3 entries" in result.message
    assert await snapshot(ledger, session.id) == before
    assert drain(queue) == []


async def test_nothing_to_cover_when_the_history_fits_the_kept_tail(ledger, compactor):
    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(6))
    before = await snapshot(ledger, session.id)
    result = await compactor.compact(session.id)  # default keeps 20,000 tokens
    assert result.status is CompactionStatus.SKIPPED
    assert await snapshot(ledger, session.id) == before


async def test_events_carry_the_summary_count_and_token_delta(ledger, compactor, events):
    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(8))
    with events.subscribe(session.id) as queue:
        result = await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
    started, finished = drain(queue)
    assert (started.type, started.trigger) == ("compaction_started", "manual")
    assert finished.type == "compaction_finished"
    assert finished.summary_id == result.summary.id
    assert finished.covered_count == 4
    view_tokens = sum(n.tokens for n in (await ledger.nodes.get_many(
        await rendered(ledger, session.id))))
    assert finished.tokens_after == view_tokens == result.tokens_after
    assert finished.tokens_before == result.tokens_before > finished.tokens_after
    assert [e.seq for e in (started, finished)] == [started.seq, started.seq + 1]


class FailingSummarizer:
    name = "failing"

    async def summarize(self, turns, previous_summary, *, instructions=None, verbatim=frozenset()):
        raise ModelUnavailable("the summarizer is overloaded (test)")


async def test_summarizer_failure_writes_nothing_and_emits_failed(ledger, events):
    compactor = make_compactor(ledger, summarizer=FailingSummarizer())
    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *turns(8))
    before = await snapshot(ledger, session.id)
    with events.subscribe(session.id) as queue:
        result = await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
    assert result.status is CompactionStatus.FAILED
    assert result.error_code == "MODEL_UNAVAILABLE" and "overloaded" in result.message
    assert [e.type for e in drain(queue)] == ["compaction_started", "compaction_failed"]
    assert without_event_counters(await snapshot(ledger, session.id)) == \
        without_event_counters(before)
    assert await head_id(ledger, session.id) == nodes[-1].id
    (more,) = await chat(ledger, session, "the session is still usable")
    assert more.predecessor_id == nodes[-1].id


class GatedSummarizer(OfflineExtractiveSummarizer):
    """Holds every summarize call until both racers are inside the summarizer."""

    def __init__(self, parties: int) -> None:
        super().__init__()
        self.barrier = asyncio.Barrier(parties)

    async def summarize(self, turns, previous_summary, *, instructions=None, verbatim=frozenset()):
        await self.barrier.wait()
        return await super().summarize(turns, previous_summary, instructions=instructions)


async def test_concurrent_compactions_leave_exactly_one_active_summary(ledger, events):
    compactor = make_compactor(ledger, summarizer=GatedSummarizer(2))
    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *turns(8))
    results = await asyncio.gather(
        compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR),
        compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR),
    )
    statuses = sorted(r.status.value for r in results)
    assert statuses == ["COMPACTED", "FAILED"]
    failed = next(r for r in results if r.status is CompactionStatus.FAILED)
    assert failed.error_code == "CONFLICT"
    winner = next(r for r in results if r.status is CompactionStatus.COMPACTED)
    summaries, _, _ = await ledger.db.driver.execute_query(
        "MATCH (n:Node {session_id: $sid, role: 'summary'}) RETURN n.id AS id", sid=session.id)
    assert [r["id"] for r in summaries] == [winner.summary.id]
    assert await head_id(ledger, session.id) == nodes[-1].id
    await assert_sound(ledger, session.id)


async def test_compaction_of_a_fork_supersedes_the_other_branch_summary(ledger, compactor):
    """Rolling: one active summary per session. The other branch renders verbatim again."""
    session = await ledger.sessions.create()
    main = await chat(ledger, session, *turns(8))
    first = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    edited = (await ledger.head.edit(main[0].id, "A different opening question. ".ljust(100, "x"))).node
    fork = [edited] + await chat(ledger, session, *turns(7, start=1), start_with="assistant")
    second = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    assert second.covers_ids == tuple(n.id for n in fork[:4])
    assert await head_id(ledger, session.id) == fork[-1].id
    assert await rendered(ledger, session.id, main[-1].id) == [session.root_id] + [
        n.id for n in main]
    assert (await ledger.summaries.get(first.id)).superseded
    await assert_sound(ledger, session.id)


async def test_manual_compaction_of_another_branch_by_head(ledger, compactor):
    session = await ledger.sessions.create()
    main = await chat(ledger, session, *turns(8))
    retried = (await ledger.head.retry(main[1].id, "short fork")).node
    result = await compactor.compact(session.id, head_id=main[-1].id, keep_recent_tokens=KEEP_FOUR)
    assert result.summary.covers_ids == tuple(n.id for n in main[:4])
    assert await head_id(ledger, session.id) == retried.id


async def test_auto_trigger_compacts_only_at_eighty_percent_of_the_budget(ledger, events):
    # ROOT (1 token) + 8 turns of 25 = 201 tokens; a window of 260 puts the threshold at 208.
    policy = BudgetPolicy(context_window=260, keep_recent_tokens=KEEP_FOUR)
    compactor = make_compactor(ledger, policy=policy)
    session = await ledger.sessions.create(system_prompt="sys")
    await chat(ledger, session, *turns(8))
    assert await compactor.compact_if_over_budget(session.id, pending_tokens=6) is None
    result = await compactor.compact_if_over_budget(session.id, pending_tokens=7)
    assert result.status is CompactionStatus.COMPACTED and result.trigger == "auto"
    assert result.tokens_after < policy.auto_compact_at


async def test_passive_trigger_compacts_then_retries_once(ledger, compactor, events):
    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(8))
    compactor.policy = BudgetPolicy(keep_recent_tokens=KEEP_FOUR)
    seen = []

    async def call():
        view = await rendered(ledger, session.id)
        seen.append(view)
        if len(seen) == 1:
            raise ContextOverflow("prompt is too long: 208656 tokens > 200000 maximum")
        return view

    with events.subscribe(session.id) as queue:
        final, compaction = await compactor.with_passive_compaction(session.id, call)
    assert len(seen) == 2 and len(final) < len(seen[0])
    assert compaction.status is CompactionStatus.COMPACTED and compaction.trigger == "passive"
    finished = [e for e in drain(queue) if e.type == "compaction_finished"]
    assert finished and finished[0].trigger == "passive"


async def test_passive_trigger_gives_up_after_a_second_overflow(ledger, compactor):
    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(8))
    compactor.policy = BudgetPolicy(keep_recent_tokens=KEEP_FOUR)
    calls = 0

    async def call():
        nonlocal calls
        calls += 1
        raise ContextOverflow("prompt is too long: 208656 tokens > 200000 maximum")

    with pytest.raises(ContextOverflow, match="still does not fit"):
        await compactor.with_passive_compaction(session.id, call)
    assert calls == 2


async def test_passive_trigger_with_nothing_to_compact_is_a_clear_overflow(ledger, compactor):
    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(2))

    async def call():
        raise ContextOverflow("prompt is too long: 208656 tokens > 200000 maximum")

    with pytest.raises(ContextOverflow, match="could not shrink"):
        await compactor.with_passive_compaction(session.id, call)


class RecordingSummarizer(OfflineExtractiveSummarizer):
    def __init__(self):
        super().__init__()
        self.calls = []

    async def summarize(self, turns, previous_summary, *, instructions=None, verbatim=frozenset()):
        self.calls.append(([t.id for t in turns], previous_summary))
        return await super().summarize(turns, previous_summary, instructions=instructions)


async def test_the_summarizer_sees_the_rendered_view_never_the_raw_chain(ledger, events):
    summarizer = RecordingSummarizer()
    compactor = make_compactor(ledger, summarizer=summarizer)
    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *turns(8))
    first = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    await chat(ledger, session, *turns(4, start=8))
    await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
    (ids1, prev1), (ids2, prev2) = summarizer.calls
    assert ids1 == [n.id for n in nodes[:4]] and prev1 is None
    assert ids2 == [n.id for n in nodes[4:8]] and prev2 == first.content


class OutageSummarizer:
    """Fails, and takes the ledger's Neo4j connection down with it (a real outage for the
    store: the driver is closed, so recording the failed call cannot reach the database)."""

    name = "outage"

    def __init__(self, driver) -> None:
        self.driver = driver

    async def summarize(self, turns, previous_summary, *, instructions=None, verbatim=frozenset()):
        await self.driver.close()
        raise ModelUnavailable("the summarizer is overloaded (test)")


async def test_a_compaction_whose_store_went_away_fails_with_the_cause(
        neo4j_server, db, tenant, events, caplog):
    """The store is gone after the summarizer ran: nothing more can be stored, not the
    call, not compaction_failed; the caller hears why, and the log says what was lost."""
    from service.errors import Unavailable
    from service.store import Database, Ledger, Limits, open_driver

    driver = open_driver(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    try:
        ledger = Ledger.open(Database(driver), tenant, Limits(), events.committed)
        compactor = make_compactor(ledger, summarizer=OutageSummarizer(driver))
        session = await ledger.sessions.create()
        await chat(ledger, session, *turns(8))
        with events.subscribe(session.id) as queue:
            with pytest.raises(Unavailable):
                await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
        assert [e.type for e in drain(queue)] == ["compaction_started"]
        assert f"compaction_failed of {session.id} not stored" in caplog.text
    finally:
        await driver.close()
    # Nothing was written: no summary, no call (the store stayed reachable for others).
    healthy = Ledger.open(db, tenant, Limits())
    assert await healthy.calls.in_sessions([session.id]) == {session.id: []}
    await assert_sound(healthy, session.id)


# --------------------------------------------------------------------------- focus instructions

SUMMARY_PROPERTIES = ("MATCH (n:Node {id: $id}) RETURN properties(n) AS p")


async def stored_properties(ledger, node_id):
    rows, _, _ = await ledger.db.driver.execute_query(SUMMARY_PROPERTIES, id=node_id)
    return rows[0]["p"]


async def test_focus_instructions_are_stored_and_the_offline_summarizer_says_it_ignored_them(
        ledger, compactor):
    from service.context.summarizers import IGNORED_INSTRUCTIONS

    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *turns(8))
    result = await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR,
                                     instructions="Keep the numbers.")
    summary = result.summary
    assert result.status is CompactionStatus.COMPACTED
    assert summary.instructions == "Keep the numbers."
    assert (await stored_properties(ledger, summary.id))["instructions"] == "Keep the numbers."
    assert (await ledger.summaries.get(summary.id)).instructions == "Keep the numbers."
    lines = summary.content.splitlines()
    assert lines[1] == IGNORED_INSTRUCTIONS == (
        "Focus instructions were given and ignored by the offline summarizer.")
    # Apart from that note the summary is what it is without instructions.
    plain = await OfflineExtractiveSummarizer().summarize(nodes[:4], None)
    assert [line for line in lines if line != IGNORED_INSTRUCTIONS] == plain.text.splitlines()
    await assert_sound(ledger, session.id)

    # The note belongs to that compaction: the next summary neither relays it nor, given
    # no instructions, writes it.
    await chat(ledger, session, *turns(4, start=8))
    second = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    assert IGNORED_INSTRUCTIONS not in second.content
    assert "instructions" not in await stored_properties(ledger, second.id)
    assert second.instructions is None
    await assert_sound(ledger, session.id)


async def test_compaction_without_instructions_is_as_before(ledger, events):
    summarizer = RecordingSummarizer()
    seen = []

    class Watching(RecordingSummarizer):
        async def summarize(self, turns, previous_summary, *, instructions=None,
                            verbatim=frozenset()):
            seen.append(instructions)
            return await super().summarize(turns, previous_summary, instructions=instructions)

    compactor = make_compactor(ledger, summarizer=Watching())
    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *turns(8))
    summary = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    assert seen == [None]
    assert summary.instructions is None
    assert "instructions" not in await stored_properties(ledger, summary.id)
    assert summary.content == (await summarizer.summarize(nodes[:4], None)).text
    assert "ignored" not in summary.content


@pytest.mark.parametrize("bad,says", [
    ("", "instructions are blank"),
    (" \n\t ", "instructions are blank"),
    ("x" * 4001, "instructions are 4001 characters; the limit is 4000"),
    ("a\ud800b", "instructions is not valid Unicode text"),
])
async def test_blank_or_oversized_instructions_are_bad_input_and_write_nothing(
        ledger, compactor, events, bad, says):
    from service.errors import BadInput
    from tests.integration.helpers import session_calls

    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(8))
    before = await snapshot(ledger, session.id)
    calls = await session_calls(ledger, session.id)
    with events.subscribe(session.id) as queue:
        with pytest.raises(BadInput) as caught:
            await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR, instructions=bad)
    assert says in caught.value.message
    assert drain(queue) == []
    assert await snapshot(ledger, session.id) == before
    assert await session_calls(ledger, session.id) == calls


async def test_instructions_at_the_limit_are_accepted(ledger, compactor):
    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(8))
    focus = "é" * 4000  # characters, not bytes
    summary = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR,
                                       instructions=focus)).summary
    assert summary.instructions == focus
    await assert_sound(ledger, session.id)
