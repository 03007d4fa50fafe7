"""The branch summary strategy, undo and coverage storage at the ledger level (the API-level
scenarios with an independent model live in tests/scenarios/test_summary_strategies.py)."""
import pytest

from service.errors import BadInput, Conflict
from tests.integration.helpers import KEEP_FOUR, assert_sound, chat, rendered, turns


async def compact(compactor, session_id, head=None):
    result = await compactor.compact(session_id, head_id=head, keep_recent_tokens=KEEP_FOUR)
    assert result.status.value == "COMPACTED", result.message
    return result.summary


async def covers_edges(ledger, summary_id) -> int:
    rows, _, _ = await ledger.db.driver.execute_query(
        "MATCH (:Node {id: $id})-[c:COVERS]->() RETURN count(c) AS n", id=summary_id)
    return rows[0]["n"]


async def test_a_summary_holds_covers_only_to_the_turns_it_newly_covers(ledger, compactor):
    session = await ledger.sessions.create("storage", "sys")
    t = await chat(ledger, session, *turns(8))
    s1 = await compact(compactor, session.id)
    t += await chat(ledger, session, *turns(4, start=8))
    s2 = await compact(compactor, session.id)
    assert s2.absorbed_id == s1.id
    assert s2.covers_ids == tuple(n.id for n in t[:8])  # the whole segment, as before
    assert (await covers_edges(ledger, s1.id), await covers_edges(ledger, s2.id)) == (4, 4)
    assert s2.compacted_head_id == t[-1].id
    assert s2.retained_ids == tuple(n.id for n in t[8:])
    await assert_sound(ledger, session.id)


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_on_one_linear_chain_both_strategies_render_alike(ledger, compactor, strategy):
    session = await ledger.sessions.create("linear", "sys", summary_strategy=strategy)
    t = await chat(ledger, session, *turns(8))
    shapes = []
    for round_ in range(3):
        summary = await compact(compactor, session.id)
        shapes.append(await rendered(ledger, session.id))
        assert shapes[-1] == [session.root_id, summary.id] + [n.id for n in t[-4:]]
        t += await chat(ledger, session, *turns(4, start=8 + 4 * round_))
    await assert_sound(ledger, session.id)


async def test_a_fork_inherits_the_deepest_summary_on_its_own_path(ledger, compactor):
    session = await ledger.sessions.create("fork", "sys", summary_strategy="branch")
    t = await chat(ledger, session, *turns(8))
    s1 = await compact(compactor, session.id)  # covers t0..t3
    t += await chat(ledger, session, *turns(8, start=8))
    s2 = await compact(compactor, session.id)  # covers t0..t11
    # A fork off t5 (inside s2's coverage, after s1's): s1 still stands in for it.
    fork = await ledger.head.append_message(session.id, "user", "a fork", predecessor_id=t[5].id)
    assert await rendered(ledger, session.id, fork.node.id) == (
        [session.root_id, s1.id] + [n.id for n in t[4:6]] + [fork.node.id])
    # Under rolling the same fork would read everything verbatim.
    await ledger.sessions.update(session.id, summary_strategy="rolling")
    assert await rendered(ledger, session.id, fork.node.id) == (
        [session.root_id] + [n.id for n in t[:6]] + [fork.node.id])
    await ledger.sessions.update(session.id, summary_strategy="branch")
    # Main still renders s2.
    assert await rendered(ledger, session.id, t[-1].id) == (
        [session.root_id, s2.id] + [n.id for n in t[12:]])
    await assert_sound(ledger, session.id)


async def test_compacting_one_branch_never_changes_another(ledger, compactor):
    session = await ledger.sessions.create("two branches", "sys", summary_strategy="branch")
    t = await chat(ledger, session, *turns(10))
    # A sibling of the last reply: both branches share t0..t8.
    other = await ledger.head.append_message(session.id, "assistant", "another answer",
                                             predecessor_id=t[8].id)
    main_before = await rendered(ledger, session.id, t[-1].id)
    s_other = await compact(compactor, session.id, head=other.node.id)
    assert set(s_other.covers_ids) <= {n.id for n in t[:9]}  # only shared turns
    assert await rendered(ledger, session.id, t[-1].id) == main_before
    assert (await rendered(ledger, session.id, other.node.id))[1] == s_other.id
    # main, appended to afterwards, still does not inherit it (its own turns predate it)
    more = await chat(ledger, session, "Question 99. after")
    assert (await rendered(ledger, session.id, more[0].id))[1:] == [n.id for n in t] + [more[0].id]
    # ...while a fork made later off the other branch's retained tail does
    late = await ledger.head.append_message(session.id, "user", "late fork",
                                            predecessor_id=other.node.id)
    assert (await rendered(ledger, session.id, late.node.id))[1] == s_other.id
    branches = {b.tip.id: b.summary_id for b in await ledger.branches.list(session.id)}
    assert branches == {more[0].id: None, late.node.id: s_other.id}
    await assert_sound(ledger, session.id)


async def test_uncompact_restores_what_applied_before(ledger, compactor, events):
    session = await ledger.sessions.create("undo", "sys")
    t = await chat(ledger, session, *turns(8))
    s1 = await compact(compactor, session.id)
    t += await chat(ledger, session, *turns(4, start=8))
    with events.subscribe(session.id) as queue:
        s2 = await compact(compactor, session.id)
        head_before = (await ledger.sessions.get(session.id)).head_id
        retired = await ledger.summaries.retire(s2.id)
        seen = [queue.get_nowait() for _ in range(queue.qsize())]
    assert retired.restored_id == s1.id
    assert ("summary_retired", s2.id, s1.id) in [
        (e.type, e.data.get("summary_id"), e.data.get("restored_summary_id")) for e in seen]
    stored = await ledger.sessions.get(session.id)
    assert (stored.head_id, stored.active_summary_id) == (head_before, s1.id)
    assert await rendered(ledger, session.id) == [session.root_id, s1.id] + [n.id for n in t[4:]]
    assert (await ledger.summaries.get(s2.id)).retired
    with pytest.raises(Conflict):
        await ledger.summaries.retire(s2.id)
    # Compacting again relays s1, the summary that applies now.
    s3 = await compact(compactor, session.id)
    assert s3.absorbed_id == s1.id
    await assert_sound(ledger, session.id)


async def test_a_strategy_change_is_announced_and_refuses_a_raced_compaction(ledger, compactor,
                                                                             events):
    session = await ledger.sessions.create("race", "sys")
    t = await chat(ledger, session, *turns(8))
    with pytest.raises(BadInput):
        await ledger.sessions.update(session.id, summary_strategy="stacked")
    from service.context.render import render_context
    view = await render_context(ledger, session.id)
    with events.subscribe(session.id) as queue:
        await ledger.sessions.update(session.id, summary_strategy="branch")
        changed = queue.get_nowait()
        assert (changed.type, changed.strategy) == ("summary_strategy_changed", "branch")
    with pytest.raises(Conflict):
        await ledger.summaries.persist(
            session.id, [t[0].id], "A summary.", absorbed_id=None,
            compacted_head_id=t[-1].id, retained_ids=[n.id for n in t[1:]],
            expected_version=view.summary_version, strategy=view.strategy)
    # A render torn beside the change's commit (its new version, the old strategy) is
    # refused too.
    with pytest.raises(Conflict):
        await ledger.summaries.persist(
            session.id, [t[0].id], "A summary.", absorbed_id=None,
            compacted_head_id=t[-1].id, retained_ids=[n.id for n in t[1:]],
            expected_version=view.summary_version + 1, strategy=view.strategy)
    await assert_sound(ledger, session.id)
