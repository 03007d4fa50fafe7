"""User moves: checkout, rewind, retry, edit, delete branch — and where HEAD ends up."""
import pytest

from service.errors import BadInput, Conflict
from tests.integration.helpers import assert_sound, branch_tips, chat, head_id


async def test_checkout_moves_head_to_any_live_node(ledger):
    session = await ledger.sessions.create()
    u1, a1, u2, a2 = await chat(ledger, session, "q1", "a1", "q2", "a2")
    move = await ledger.head.set_head(session.id, a1.id)
    assert (move.previous_head_id, move.head_id, move.moved) == (a2.id, a1.id, True)
    assert await head_id(ledger, session.id) == a1.id
    same = await ledger.head.set_head(session.id, a1.id)
    assert not same.moved
    await assert_sound(ledger, session.id)


async def test_rewind_goes_back_along_the_branch_and_keeps_everything(ledger):
    session = await ledger.sessions.create()
    u1, a1, u2, a2 = await chat(ledger, session, "q1", "a1", "q2", "a2")
    await ledger.head.rewind(session.id, a1.id)
    assert await head_id(ledger, session.id) == a1.id
    assert await branch_tips(ledger, session.id) == {"a2": (5, False)}
    (branch,) = await ledger.branches.list(session.id)
    assert branch.holds_head
    # Chatting after a rewind forks from the rewound point.
    (u3,) = await chat(ledger, session, "q2 again")
    assert u3.predecessor_id == a1.id
    assert await branch_tips(ledger, session.id) == {"a2": (5, False), "q2 again": (4, True)}
    await assert_sound(ledger, session.id)


async def test_rewind_refuses_a_node_off_the_current_branch(ledger):
    session = await ledger.sessions.create()
    u1, a1 = await chat(ledger, session, "q1", "a1")
    edited = (await ledger.head.edit(u1.id, "q1 edited")).node
    with pytest.raises(BadInput, match="not an ancestor"):
        await ledger.head.rewind(session.id, a1.id)
    assert await head_id(ledger, session.id) == edited.id


async def test_retry_forks_a_sibling_reply_and_moves_head(ledger):
    session = await ledger.sessions.create()
    u1, a1 = await chat(ledger, session, "q1", "a1")
    retried = (await ledger.head.retry(a1.id, "a1, second take")).node
    assert retried.predecessor_id == u1.id
    assert retried.fork_of == a1.id
    assert retried.depth == a1.depth
    assert await head_id(ledger, session.id) == retried.id
    assert await branch_tips(ledger, session.id) == {"a1": (3, False), "a1, second take": (3, True)}
    await assert_sound(ledger, session.id)


async def test_edit_forks_a_sibling_user_message_and_moves_head(ledger):
    session = await ledger.sessions.create()
    u1, a1, u2, a2 = await chat(ledger, session, "q1", "a1", "q2", "a2")
    edited = (await ledger.head.edit(u1.id, "q1, rephrased")).node
    assert edited.predecessor_id == session.root_id
    assert await head_id(ledger, session.id) == edited.id
    assert await branch_tips(ledger, session.id) == {"a2": (5, False), "q1, rephrased": (2, True)}
    await assert_sound(ledger, session.id)


async def test_retry_and_edit_check_the_role_they_fork(ledger):
    session = await ledger.sessions.create()
    u1, a1 = await chat(ledger, session, "q1", "a1")
    with pytest.raises(BadInput, match="not an assistant reply"):
        await ledger.head.retry(u1.id, "x")
    with pytest.raises(BadInput, match="not a user message"):
        await ledger.head.edit(a1.id, "x")
    with pytest.raises(BadInput, match="ROOT"):
        await ledger.head.edit(session.root_id, "x")
    assert await head_id(ledger, session.id) == a1.id


async def test_delete_branch_tombstones_exclusive_nodes_and_moves_head_to_fork_point(ledger):
    session = await ledger.sessions.create()
    u1, a1, u2, a2 = await chat(ledger, session, "q1", "a1", "q2", "a2")
    await ledger.head.rewind(session.id, a1.id)
    u2b, a2b = await chat(ledger, session, "q2b", "a2b")
    deleted = await ledger.head.delete_branch(session.id, a2b.id)
    assert deleted.fork_point_id == a1.id
    assert set(deleted.deleted_ids) == {u2b.id, a2b.id}
    assert (deleted.head.previous_head_id, deleted.head.head_id) == (a2b.id, a1.id)
    assert await head_id(ledger, session.id) == a1.id
    assert await branch_tips(ledger, session.id) == {"a2": (5, False)}
    # Deleted nodes stay readable (calls that read them keep their provenance) but are flagged
    # and vanish from every view.
    assert (await ledger.nodes.get(a2b.id)).deleted
    assert [c.id for c in await ledger.nodes.children(a1.id)] == [u2.id]
    await assert_sound(ledger, session.id)


async def test_delete_branch_not_holding_head_leaves_head(ledger):
    session = await ledger.sessions.create()
    u1, a1 = await chat(ledger, session, "q1", "a1")
    retried = (await ledger.head.retry(a1.id, "a1 retried")).node
    await ledger.head.set_head(session.id, a1.id)
    deleted = await ledger.head.delete_branch(session.id, retried.id)
    assert deleted.deleted_ids == (retried.id,)
    assert not deleted.head.moved
    assert await head_id(ledger, session.id) == a1.id
    await assert_sound(ledger, session.id)


async def test_delete_branch_takes_its_side_branches_along(ledger):
    session = await ledger.sessions.create()
    u1, a1 = await chat(ledger, session, "q1", "a1")
    edited = (await ledger.head.edit(u1.id, "q1 edited")).node
    task = await ledger.head.append_message(session.id, "user", "sub task",
                                            predecessor_id=a1.id, caller_id=a1.id,
                                            side_branch=True, advance_head=False)
    deleted = await ledger.head.delete_branch(session.id, a1.id)
    assert set(deleted.deleted_ids) == {u1.id, a1.id, task.node.id}
    assert deleted.fork_point_id == session.root_id
    assert not deleted.head.moved
    assert await head_id(ledger, session.id) == edited.id
    await assert_sound(ledger, session.id)


async def test_deleting_the_only_branch_leaves_root_with_head(ledger):
    session = await ledger.sessions.create()
    u1, a1 = await chat(ledger, session, "q1", "a1")
    deleted = await ledger.head.delete_branch(session.id, a1.id)
    assert deleted.head.head_id == session.root_id
    assert [b.tip.id for b in await ledger.branches.list(session.id)] == [session.root_id]
    await assert_sound(ledger, session.id)


async def test_delete_branch_refuses_non_tips_and_repeats(ledger):
    session = await ledger.sessions.create()
    u1, a1 = await chat(ledger, session, "q1", "a1")
    with pytest.raises(BadInput, match="not a branch tip"):
        await ledger.head.delete_branch(session.id, u1.id)
    with pytest.raises(BadInput, match="ROOT"):
        await ledger.head.delete_branch(session.id, session.root_id)
    await ledger.head.delete_branch(session.id, a1.id)
    with pytest.raises(Conflict, match="already deleted"):
        await ledger.head.delete_branch(session.id, a1.id)
    with pytest.raises(BadInput, match="deleted"):
        await ledger.head.set_head(session.id, a1.id)
    with pytest.raises(BadInput, match="deleted"):
        await ledger.head.append_message(session.id, "user", "x", predecessor_id=a1.id)


async def test_branch_listing_marks_head_holder_after_rewind(ledger):
    session = await ledger.sessions.create()
    u1, a1 = await chat(ledger, session, "q1", "a1")
    retried = (await ledger.head.retry(a1.id, "a1 retried")).node
    await ledger.head.rewind(session.id, u1.id)
    branches = {b.tip.id: b for b in await ledger.branches.list(session.id)}
    assert set(branches) == {a1.id, retried.id}
    assert all(b.holds_head and not b.is_head for b in branches.values())


async def test_committed_appends_and_head_moves_are_announced(ledger, events):
    session = await ledger.sessions.create()
    with events.subscribe(session.id) as queue:
        (u1,) = await chat(ledger, session, "q1")
        side = await ledger.head.append_message(session.id, "assistant", "x",
                                                predecessor_id=session.root_id)
        await ledger.head.set_head(session.id, session.root_id)
        with pytest.raises(BadInput):
            await ledger.head.rewind(session.id, u1.id)  # refused: nothing announced
    seen = []
    while not queue.empty():
        seen.append(queue.get_nowait())
    assert [(e.type, getattr(e, "node_id", None) or e.head_id) for e in seen] == [
        ("node_appended", u1.id), ("head_moved", u1.id),
        ("node_appended", side.node.id),
        ("head_moved", session.root_id),
    ]
    assert seen[1].previous_head_id == session.root_id
