"""The append rule: HEAD advances only when the new node extends HEAD, decided atomically."""
import asyncio
import logging

import pytest

from service.store import Role
from tests.integration.helpers import assert_sound, chat, head_id


async def test_append_at_head_advances_head_and_links_predecessor(ledger):
    session = await ledger.sessions.create("t", "You are terse.")
    user, reply = await chat(ledger, session, "hello", "hi there")
    assert user.predecessor_id == session.root_id
    assert reply.predecessor_id == user.id
    assert (user.depth, reply.depth) == (1, 2)
    assert user.seq < reply.seq
    assert user.role is Role.USER and reply.role is Role.ASSISTANT
    assert user.tokens > 0
    assert await head_id(ledger, session.id) == reply.id
    await assert_sound(ledger, session.id)


async def test_append_under_an_older_node_is_a_fork_and_leaves_head(ledger):
    session = await ledger.sessions.create()
    user, reply = await chat(ledger, session, "q", "a")
    side = await ledger.head.append_message(session.id, "assistant", "another answer",
                                            predecessor_id=user.id)
    assert not side.head_moved
    assert await head_id(ledger, session.id) == reply.id
    children = await ledger.nodes.children(user.id)
    assert [c.id for c in children] == [reply.id, side.node.id]
    await assert_sound(ledger, session.id)


async def test_append_is_one_round_trip(ledger):
    session = await ledger.sessions.create()
    before = ledger.db.round_trips.total
    await ledger.head.append_message(session.id, "user", "one statement")
    assert ledger.db.round_trips.total - before == 1


async def test_twenty_concurrent_appends_on_one_head_one_advances_rest_fork(ledger):
    session = await ledger.sessions.create()
    (start,) = await chat(ledger, session, "fork here")
    results = await asyncio.gather(*(
        ledger.head.append_message(session.id, "assistant", f"answer {i}",
                                   predecessor_id=start.id)
        for i in range(20)
    ))
    advanced = [r.node for r in results if r.head_moved]
    assert len(advanced) == 1
    assert await head_id(ledger, session.id) == advanced[0].id
    children = await ledger.nodes.children(start.id)
    assert sorted(c.content for c in children) == sorted(f"answer {i}" for i in range(20))
    assert len({r.node.seq for r in results}) == 20
    branches = await ledger.branches.list(session.id)
    assert len(branches) == 20
    assert [b.is_head for b in branches].count(True) == 1
    await assert_sound(ledger, session.id)


async def test_twenty_concurrent_appends_at_head_form_one_chain(ledger):
    session = await ledger.sessions.create()
    results = await asyncio.gather(*(
        ledger.head.append_message(session.id, "user", f"message {i}") for i in range(20)
    ))
    assert all(r.head_moved for r in results)
    depths = sorted(r.node.depth for r in results)
    assert depths == list(range(1, 21))
    tip = max(results, key=lambda r: r.node.depth).node
    assert await head_id(ledger, session.id) == tip.id
    branches = await ledger.branches.list(session.id)
    assert [(b.tip.id, b.length, b.is_head) for b in branches] == [(tip.id, 21, True)]
    await assert_sound(ledger, session.id)


async def test_concurrent_writes_on_one_session_never_deadlock(ledger, caplog):
    """Appends, checkouts and session updates racing on one session queue on its write lock;
    none is refused as a deadlock and retried (the driver logs every retry)."""
    session = await ledger.sessions.create()
    (start,) = await chat(ledger, session, "start")

    async def appender(i: int) -> None:
        for j in range(10):
            await ledger.head.append_message(session.id, "user", f"writer {i} message {j}")

    async def mover() -> None:
        for _ in range(10):
            await ledger.head.set_head(session.id, start.id)
            await ledger.sessions.update(session.id, title="moved", set_title=True)

    with caplog.at_level(logging.WARNING, logger="neo4j"):
        await asyncio.gather(*(appender(i) for i in range(7)), mover())
    retries = [r.getMessage() for r in caplog.records if "will be retried" in r.getMessage()]
    assert retries == []
    await assert_sound(ledger, session.id)


async def test_caller_links_a_tool_node_to_the_turn_that_spawned_it(ledger):
    session = await ledger.sessions.create()
    user, reply = await chat(ledger, session, "run the tool", "calling it")
    tool = await ledger.head.append_message(session.id, "tool", "tool output",
                                            caller_id=reply.id, metadata={"tool": "grep"})
    assert tool.head_moved
    assert tool.node.caller_id == reply.id
    assert tool.node.metadata == {"tool": "grep"}
    stored = await ledger.nodes.get(tool.node.id)
    assert stored == tool.node
    await assert_sound(ledger, session.id)


async def test_side_branch_nodes_never_become_user_branches(ledger):
    session = await ledger.sessions.create()
    user, reply = await chat(ledger, session, "spawn a task", "spawning")
    task_root = await ledger.head.append_message(
        session.id, "user", "sub-agent prompt", predecessor_id=reply.id, caller_id=reply.id,
        side_branch=True, advance_head=False)
    task_reply = await ledger.head.append_message(
        session.id, "assistant", "sub-agent reply", predecessor_id=task_root.node.id,
        caller_id=reply.id, advance_head=False)
    assert not task_root.head_moved and not task_reply.head_moved
    assert task_reply.node.side_branch  # inherited from its predecessor
    assert await head_id(ledger, session.id) == reply.id
    branches = await ledger.branches.list(session.id)
    assert [(b.tip.id, b.is_head) for b in branches] == [(reply.id, True)]
    await assert_sound(ledger, session.id)


async def test_content_is_stored_byte_for_byte(ledger):
    session = await ledger.sessions.create()
    odd = "MATCH (n) DETACH DELETE n; // $param ' \" \\ \u0000 \u202e שלום 🧪 e\u0301"
    appended = await ledger.head.append_message(session.id, "user", odd)
    assert (await ledger.nodes.get(appended.node.id)).content == odd


@pytest.mark.parametrize("stamp", [
    "2026-03-29T01:59:59.999999900+01:00[Europe/Paris]",  # just before a zone change
    "2026-12-01T05:35:23.123456789Z",
    "1969-07-20T20:17:40.000000500-05:00",
])
async def test_created_at_reads_as_the_driver_would_convert_it(ledger, stamp):
    """node_map sends created_at as numbers; the node reads back as the driver's own
    conversion of the stored value (nanoseconds truncated, offset kept)."""
    session = await ledger.sessions.create("stamps", "sys")
    node = (await ledger.head.append_message(session.id, "user", "when?")).node
    records, _, _ = await ledger.db.driver.execute_query(
        "MATCH (n:Node {id: $id}) SET n.created_at = datetime($stamp) RETURN n.created_at AS at",
        id=node.id, stamp=stamp)
    expected = records[0]["at"].to_native()
    read = await ledger.nodes.get(node.id)
    assert read.created_at == expected
    assert read.created_at.utcoffset() == expected.utcoffset()
    assert read.created_at.isoformat() == expected.isoformat()
