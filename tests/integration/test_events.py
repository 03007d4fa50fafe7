"""Events as data: stored with their change, numbered per session, read back in order by a
feed in any process (service/events.py)."""
import asyncio

import pytest

from service.errors import EventsExpired
from service.events import EventFeed
from service.store import Ledger, Limits
from service.store.queries import packaged_queries
from tests.integration.helpers import chat, stored_events


async def next_events(stream, count: int) -> list:
    async with asyncio.timeout(10):
        return [await anext(stream) for _ in range(count)]


async def test_a_feed_delivers_another_processs_writes_in_order(db, tenant):
    feed = EventFeed(db, poll_seconds=0.05)
    writer = Ledger.open(db, tenant, Limits())  # another process: it never tells this feed
    session = await writer.sessions.create()
    stream = feed.stream(session.id, 0)
    try:
        (u1, a1) = await chat(writer, session, "q1", "a1")
        await writer.head.set_head(session.id, u1.id)
        got = await next_events(stream, 5)
    finally:
        await stream.aclose()
        await feed.close()
    assert [(e.seq, e.type) for e in got] == [
        (1, "node_appended"), (2, "head_moved"), (3, "node_appended"), (4, "head_moved"),
        (5, "head_moved")]
    assert (got[4].previous_head_id, got[4].head_id) == (a1.id, u1.id)
    assert got == await stored_events(writer, session.id)


async def test_a_write_refused_stores_no_event_and_takes_no_number(ledger):
    session = await ledger.sessions.create()
    (u1,) = await chat(ledger, session, "q1")
    with pytest.raises(Exception):
        await ledger.head.rewind(session.id, "nod_nope")
    (a1,) = await chat(ledger, session, "a1", start_with="assistant")
    assert [e.seq for e in await stored_events(ledger, session.id)] == [1, 2, 3, 4]
    assert (await ledger.events.bounds(session.id)).last_seq == 4


async def test_retention_forgets_the_oldest_and_a_subscriber_behind_it_is_told(db, tenant):
    feed = EventFeed(db, poll_seconds=30)  # reads only when woken
    writer = Ledger.open(db, tenant, Limits(event_retention=5))
    session = await writer.sessions.create()
    stream = feed.stream(session.id, 0)
    try:
        reading = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.2)  # the feed read once: nothing yet
        await chat(writer, session, *[f"t{i}" for i in range(5)])  # 10 events, 5 kept
        feed.committed(session.id, [])
        with pytest.raises(EventsExpired, match="reload the session"):
            async with asyncio.timeout(10):
                await reading
    finally:
        await stream.aclose()
        await feed.close()
    assert [e.seq for e in await stored_events(writer, session.id)] == [6, 7, 8, 9, 10]
    bounds = await writer.events.bounds(session.id)
    assert (bounds.last_seq, bounds.pruned_through) == (10, 5)
    assert await writer.violations(session.id) == []


async def test_retention_forgets_in_batches_after_the_write_that_reaches_one(db, tenant):
    """Retention 50 forgets in batches of 5 (service/store/events.py: prune_batch): only a
    write whose events reach a multiple of 5 past the 50th prunes, in a statement of its
    own, down to the newest 50; in between a session holds up to 54."""
    writer = Ledger.open(db, tenant, Limits(event_retention=50))
    session = await writer.sessions.create()
    await chat(writer, session, *[f"t{i}" for i in range(29)])  # 58 events
    bounds = await writer.events.bounds(session.id)
    assert (bounds.last_seq, bounds.pruned_through) == (58, 6)  # pruned after seq 56
    assert [e.seq for e in await stored_events(writer, session.id)] == list(range(7, 59))
    await chat(writer, session, "t29", start_with="assistant")  # seqs 59, 60
    bounds = await writer.events.bounds(session.id)
    assert (bounds.last_seq, bounds.pruned_through) == (60, 10)
    assert db.round_trips.by_name["events_prune"] == 2  # after seqs 56 and 60
    assert await writer.violations(session.id) == []


def _operators(plan) -> list[tuple[str, str]]:
    found = [(plan["operatorType"], str(plan.get("args", {}).get("Details", "")))]
    for child in plan.get("children", []):
        found += _operators(child)
    return found


async def test_a_write_that_stores_events_reads_no_event(neo4j_driver):
    """Storing a write's events only creates them: no operator of the write's plan reads
    :Event nodes (EXPLAIN, so nothing runs). A read of them would tie the plan of every
    write to the Event statistics, which move with every write — Neo4j then plans the
    write again, 0.3 s and more each time — and forgetting past retention is done in
    batches by a statement of its own (events_prune)."""
    writes = {name: q for name, q in packaged_queries().items() if "CREATE (e:Event" in q.source}
    assert {"append_message", "fork_sibling", "set_head", "summary_persist"} <= set(writes)
    reads = {}
    async with neo4j_driver.session() as session:
        for name, query in writes.items():
            result = await session.run("EXPLAIN " + query.text,
                                       query.bind(dict.fromkeys(query.params)))
            plan = (await result.consume()).plan
            reads[name] = [(op, details) for op, details in _operators(plan)
                           if ":Event" in details and not op.startswith("Create")]
    assert reads == {name: [] for name in writes}
