"""Spec §3: segment replacement, decided by stored data alone."""
import pytest

from service.context.render import render_context
from service.errors import NotFound

from tests.integration.helpers import KEEP_FOUR, chat, head_id, rendered, turns


async def compacted_session(ledger, compactor, count=8, keep=KEEP_FOUR):
    """ROOT + `count` turns; compaction keeps the last `keep` tokens (4 turns)."""
    session = await ledger.sessions.create("render", "system prompt")
    nodes = await chat(ledger, session, *turns(count))
    result = await compactor.compact(session.id, keep_recent_tokens=keep)
    assert result.status.value == "COMPACTED", result.message
    return session, nodes, result.summary


async def test_the_summary_enters_the_prompt_in_place_of_its_segment(ledger, compactor):
    session, nodes, summary = await compacted_session(ledger, compactor)
    assert summary.covers_ids == tuple(n.id for n in nodes[:4])
    assert await rendered(ledger, session.id) == [session.root_id, summary.id] + [
        n.id for n in nodes[4:]]


async def test_uncompacted_chain_renders_verbatim(ledger):
    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *turns(5))
    assert await rendered(ledger, session.id) == [session.root_id] + [n.id for n in nodes]


async def test_a_fork_from_inside_the_covered_segment_renders_verbatim(ledger, compactor):
    session, nodes, summary = await compacted_session(ledger, compactor)
    retried = (await ledger.head.retry(nodes[1].id, "a different answer")).node
    (follow_up,) = await chat(ledger, session, "and then?")
    assert await rendered(ledger, session.id) == [
        session.root_id, nodes[0].id, retried.id, follow_up.id]


async def test_a_fork_whose_chain_holds_the_whole_segment_renders_with_the_summary(
        ledger, compactor):
    session, nodes, summary = await compacted_session(ledger, compactor)
    retried = (await ledger.head.retry(nodes[5].id, "another take on the tail")).node
    assert await rendered(ledger, session.id) == [
        session.root_id, summary.id, nodes[4].id, retried.id]
    # Forking right after the segment's last node still holds the whole segment.
    edited = (await ledger.head.edit(nodes[4].id, "edited first retained turn")).node
    assert await rendered(ledger, session.id) == [session.root_id, summary.id, edited.id]


async def test_a_head_inside_the_segment_renders_verbatim_and_its_last_node_renders_the_summary(
        ledger, compactor):
    session, nodes, summary = await compacted_session(ledger, compactor)
    assert await rendered(ledger, session.id, nodes[2].id) == [
        session.root_id] + [n.id for n in nodes[:3]]
    assert await rendered(ledger, session.id, nodes[3].id) == [session.root_id, summary.id]


async def test_rendering_does_not_depend_on_where_head_is(ledger, compactor):
    session, nodes, summary = await compacted_session(ledger, compactor)
    fork = (await ledger.head.retry(nodes[1].id, "fork inside the segment")).node
    heads = [nodes[-1].id, fork.id, nodes[2].id, session.root_id]
    expected = {h: await rendered(ledger, session.id, h) for h in heads}
    for checkout in heads:
        await ledger.head.set_head(session.id, checkout)
        for h in heads:
            assert await rendered(ledger, session.id, h) == expected[h]
        assert await rendered(ledger, session.id) == expected[checkout]


async def test_superseded_summaries_are_never_consulted(ledger, compactor):
    session, nodes, first = await compacted_session(ledger, compactor)
    more = await chat(ledger, session, *turns(4, start=8))
    second = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    assert second.covers_ids == tuple(n.id for n in nodes)  # the old segment, extended
    assert (await ledger.summaries.get(first.id)).superseded
    # A fork that holds the first summary's segment but not the second's renders verbatim:
    # the relic would have fit it, but relics never replace anything.
    fork = (await ledger.head.retry(nodes[5].id, "fork between the two segments")).node
    assert await rendered(ledger, session.id, fork.id) == [
        session.root_id] + [n.id for n in nodes[:5]] + [fork.id]
    main = await rendered(ledger, session.id, more[-1].id)
    assert first.id not in main and main[:2] == [session.root_id, second.id]


async def test_render_is_one_round_trip_whatever_the_history(ledger, compactor):
    session, nodes, summary = await compacted_session(ledger, compactor, count=40)
    before = ledger.db.round_trips.total
    await rendered(ledger, session.id)
    await rendered(ledger, session.id, nodes[3].id)
    assert ledger.db.round_trips.total - before == 2
    assert await head_id(ledger, session.id) == nodes[-1].id


async def long_chain(ledger, length: int):
    """A session of ROOT and `length` turns, bulk-written with test-only Cypher that
    creates what append_message would, then checked against the invariants."""
    session = await ledger.sessions.create("long", "sys")
    await ledger.db.driver.execute_query(
        "MATCH (s:Session {id: $sid})-[h:HEAD]->(root:Node) "
        "UNWIND range(1, $n) AS i "
        "CREATE (n:Node {id: $sid + '-' + toString(i), session_id: $sid, tenant: s.tenant,"
        " role: CASE i % 2 WHEN 1 THEN 'user' ELSE 'assistant' END, content: 'turn ' + i,"
        " created_at: datetime(), tokens: (size('turn ' + i) + 3) / 4, metadata: '{}',"
        " seq: i, depth: i,"
        " side_branch: false}) "
        "WITH s, h, root, collect(n) AS chain "
        "FOREACH (i IN range(0, size(chain) - 1) |"
        " FOREACH (p IN CASE i WHEN 0 THEN [root] ELSE [chain[i - 1]] END |"
        "  FOREACH (c IN [chain[i]] | CREATE (c)-[:PREDECESSOR]->(p)))) "
        "DELETE h "
        "WITH s, chain[-1] AS tip CREATE (s)-[:HEAD]->(tip) SET s.next_seq = $n + 1",
        sid=session.id, n=length)
    assert await ledger.violations(session.id) == []
    return session


async def test_a_very_long_verbatim_chain_renders(ledger):
    """A path value of ~10,000 hops overflowed Neo4j's stack when encoded; the render walks
    distinct ancestors instead."""
    length = 25_000
    session = await long_chain(ledger, length)
    view = await rendered(ledger, session.id)
    assert len(view) == length + 1
    assert view[:2] == [session.root_id, f"{session.id}-1"] and view[-1] == f"{session.id}-{length}"


async def test_renders_of_many_parts_come_back_whole_and_in_the_order_asked(ledger):
    """A render's nodes come a part of 1,000 a row (one row would outgrow Neo4j's network
    buffers on a long session never compacted); several renders in one statement, each
    of several parts, are put back together each in its own order, with what only the
    first part carries (the pins)."""
    length = 2_500
    long = await long_chain(ledger, length)
    await ledger.pins.set(f"{long.id}-1800", max_pinned_tokens=1_000)
    short = await ledger.sessions.create("short", "sys")
    await chat(ledger, short, *turns(2))
    before = ledger.db.round_trips.total
    whole, cut, small, missing = await ledger.views.render_many(
        [(long.id, None), (long.id, f"{long.id}-1500"), (short.id, None), ("ses_none", None)])
    assert ledger.db.round_trips.total - before == 1
    assert [n.id for n in whole.nodes] == [long.root_id] + [
        f"{long.id}-{i}" for i in range(1, length + 1)]
    assert [n.id for n in cut.nodes] == [long.root_id] + [
        f"{long.id}-{i}" for i in range(1, 1501)]
    assert whole.pinned_ids == cut.pinned_ids == {f"{long.id}-1800"}
    assert whole.head_id == f"{long.id}-{length}" and cut.head_id == f"{long.id}-1500"
    assert len(small.nodes) == 3 and small.pinned_ids == frozenset()
    assert isinstance(missing, NotFound)


async def test_a_compacted_render_of_many_parts_replaces_its_segment(ledger, compactor):
    """Segment replacement on a render longer than a part: the summary comes once, in the
    segment's place, and the chain it keeps follows in order across the parts."""
    length = 3_000
    session = await long_chain(ledger, length)
    result = await compactor.compact(session.id, keep_recent_tokens=4_500)  # 3 a turn
    assert result.status.value == "COMPACTED", result.message
    summary = result.summary
    chain = [f"{session.id}-{i}" for i in range(1, length + 1)]
    covered = len(summary.covers_ids)
    assert summary.covers_ids == tuple(chain[:covered])
    assert covered > 1_001 and length - covered > 1_000  # each render in more than a part
    view = await rendered(ledger, session.id)
    assert view == [session.root_id, summary.id] + chain[covered:]
    # A head inside the segment renders verbatim, across parts too.
    inside = chain[covered - 2]
    assert await rendered(ledger, session.id, inside) == [session.root_id] + chain[:covered - 1]
    # A fork below the segment's last node holds it whole.
    fork = (await ledger.head.retry(chain[-1], "another take")).node
    assert await rendered(ledger, session.id, fork.id) == \
        [session.root_id, summary.id] + chain[covered:-1] + [fork.id]


async def test_a_graph_of_many_parts_comes_back_whole(ledger):
    """The graph's nodes come a part of 1,000 a row too: every node once, in seq order."""
    length = 2_500
    long = await long_chain(ledger, length)
    short = await ledger.sessions.create("short", "sys")
    graphs = await ledger.views.graph_many([long.id, short.id, "ses_none", short.id])
    assert [r.id for r in graphs[long.id]] == [long.root_id] + [
        f"{long.id}-{i}" for i in range(1, length + 1)]
    assert [r.id for r in graphs[long.id] if r.is_head] == [f"{long.id}-{length}"]
    assert [r.id for r in graphs[short.id]] == [short.root_id] and graphs["ses_none"] == []


async def render_db_hits(ledger, session_id) -> int:
    """Neo4j's own count of the work a render of HEAD takes (PROFILE, so no timing)."""
    query = ledger.db.queries["render_context"]
    params = query.bind({"tenant": ledger.tenant,
                         "requests": [{"session_id": session_id, "head_id": None}]})
    async with ledger.db.driver.session() as session:
        result = await session.run("PROFILE " + query.text, params)
        profile = (await result.consume()).profile

    def hits(plan) -> int:
        return plan.get("dbHits", 0) + sum(hits(c) for c in plan.get("children", []))

    return hits(profile)


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_a_compacted_render_costs_the_same_at_ten_times_the_history(ledger, compactor,
                                                                          strategy):
    """The walk stops at the segment's last turn: 10× the covered history, same work."""
    costs = []
    for count in (40, 400):
        session = await ledger.sessions.create("cost", "sys", summary_strategy=strategy)
        await chat(ledger, session, *turns(count))
        result = await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
        assert result.covered_count == count - 4
        assert len(await rendered(ledger, session.id)) == 6
        costs.append(await render_db_hits(ledger, session.id))
    small, large = costs
    assert large <= small * 1.1 + 20, costs


async def test_a_segmented_render_costs_the_same_at_ten_times_the_covered_history(ledger,
                                                                                  compactor):
    """The segmented walk steps from a segment's end to its summary over ENDS_AT: it never
    reads a stand-in's COVERS edges, so three segments of 10× the turns cost the same."""
    costs = []
    for count in (40, 400):
        session = await ledger.sessions.create("cost", "sys", summary_strategy="segmented")
        for _ in range(3):
            await chat(ledger, session, *turns(count // 3))
            result = await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
            assert result.status.value == "COMPACTED", result.message
        view = await render_context(ledger, session.id)
        assert len(view.stand_in_ids) == 3 and len(view.nodes) <= 1 + 3 + 4
        costs.append(await render_db_hits(ledger, session.id))
    small, large = costs
    assert large <= small * 1.1 + 20, costs
