"""Spec §8 on the store: chat → fork → checkout → compact → chat → compact → chat → restart.

After every step: HEAD, the branch list, and the rendered id list of every branch.
"""
from service.store import Database, Ledger, Limits, open_driver
from tests.integration.helpers import KEEP_FOUR, chat, rendered, turns


async def expect(ledger: Ledger, session, head, branches: dict[str, list[str]]) -> None:
    """`branches`: tip id -> the ids that tip must render, in order."""
    stored = await ledger.sessions.get(session.id)
    assert stored.head_id == head
    listed = await ledger.branches.list(session.id)
    assert {b.tip.id for b in listed} == set(branches)
    assert [b.tip.id for b in listed if b.is_head] == [head]
    for tip, ids in branches.items():
        assert await rendered(ledger, session.id, tip) == ids, f"branch {tip}"
    assert await rendered(ledger, session.id) == branches[head]
    assert await ledger.violations(session.id) == []


def ids(*nodes):
    return [n if isinstance(n, str) else n.id for n in nodes]


async def test_the_section_8_flow_on_the_store(ledger, compactor, neo4j_server):
    session = await ledger.sessions.create("§8", "You are helpful.")
    R = session.root_id

    # chat
    m = await chat(ledger, session, *turns(8))
    await expect(ledger, session, m[7].id, {m[7].id: ids(R, *m)})

    # fork: edit an early user message, continue there
    e2 = (await ledger.head.edit(m[2].id, "Question 002, rephrased. ".ljust(100, "x"))).node
    (f3,) = await chat(ledger, session, *turns(1, start=3), start_with="assistant")
    fork = ids(R, m[0], m[1], e2, f3)
    await expect(ledger, session, f3.id, {m[7].id: ids(R, *m), f3.id: fork})

    # checkout back to the main branch
    await ledger.head.set_head(session.id, m[7].id)
    await expect(ledger, session, m[7].id, {m[7].id: ids(R, *m), f3.id: fork})

    # compact: the main branch folds its first four turns; the fork lacks m3, stays verbatim
    s1 = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    assert s1.covers_ids == tuple(ids(*m[:4]))
    await expect(ledger, session, m[7].id, {m[7].id: ids(R, s1.id, *m[4:]), f3.id: fork})

    # chat
    m += await chat(ledger, session, *turns(4, start=8))
    await expect(ledger, session, m[11].id, {m[11].id: ids(R, s1.id, *m[4:]), f3.id: fork})

    # compact again: s2 absorbs s1 and extends its coverage; s1 becomes an invisible relic
    s2 = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    assert s2.covers_ids == tuple(ids(*m[:8]))
    await expect(ledger, session, m[11].id, {m[11].id: ids(R, s2.id, *m[8:]), f3.id: fork})

    # chat
    m += await chat(ledger, session, *turns(2, start=12))
    final = {m[13].id: ids(R, s2.id, *m[8:]), f3.id: fork}
    await expect(ledger, session, m[13].id, final)

    # restart the service side (new driver, new ledger objects) and load
    driver = open_driver(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    try:
        reloaded = Ledger.open(Database(driver), ledger.tenant, Limits())
        await reloaded.db.apply_schema()
        await expect(reloaded, session, m[13].id, final)
        loaded = await reloaded.sessions.get(session.id)
        assert loaded.extra_meta["_last_summary_id"] == s2.id
        assert (await reloaded.summaries.get(s1.id)).superseded
    finally:
        await driver.close()
