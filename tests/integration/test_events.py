"""Events as data: stored with their change, numbered per session, read back in order by a
feed in any process (service/events.py)."""
import asyncio

import pytest

from service.errors import EventsExpired
from service.events import EventFeed
from service.store import Ledger, Limits
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
