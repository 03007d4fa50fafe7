"""Migration 009: every summary gets its ENDS_AT edge to its segment's last turn. Summaries
written before it had none; the edges are removed here with plain Cypher, as they were."""
from service.context.render import render_context
from service.store import Limits
from service.store.queries import load_migrations
from tests.integration.helpers import (
    DELETE_SESSION, KEEP_FOUR, broken_sessions, chat, run_cypher, turns,
)

ENDS = """
MATCH (x:Node {session_id: $sid, role: 'summary'})
RETURN x.id AS summary, [(x)-[:ENDS_AT]->(e:Node) | e.id] AS ends, x.covers_last_id AS last
ORDER BY x.seq
"""


async def migrate(db):
    migration = next(m for m in load_migrations() if m.name == "summary_ends")
    assert migration.version == 9
    for statement in migration.statements:
        await db.driver.execute_query(statement)


async def test_the_migration_gives_each_summary_its_segment_end(ledger, compactor, db, tenant):
    sessions = []
    try:
        for strategy in ("rolling", "segmented"):
            session = await ledger.sessions.create(f"ends {strategy}", "sys",
                                                   summary_strategy=strategy)
            sessions.append(session)
            for _ in range(3):
                await chat(ledger, session, *turns(10))
                result = await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
                assert result.status.value == "COMPACTED", result.message
        written = {s.id: await run_cypher(db, ENDS, sid=s.id) for s in sessions}
        assert all(row["ends"] == [row["last"]] for rows in written.values() for row in rows)
        before = {s.id: [n.id for n in (await render_context(ledger, s.id)).nodes] for s in sessions}
        for s in sessions:
            await run_cypher(db, "MATCH (:Node {session_id: $sid})-[r:ENDS_AT]->() DELETE r",
                             sid=s.id)
            assert len(await ledger.violations(s.id)) == 3

        await migrate(db)

        assert {s.id: await run_cypher(db, ENDS, sid=s.id) for s in sessions} == written
        assert await broken_sessions(db, Limits(), tenant) == {}
        assert {s.id: [n.id for n in (await render_context(ledger, s.id)).nodes] for s in sessions} == before
        await migrate(db)  # idempotent
        assert {s.id: await run_cypher(db, ENDS, sid=s.id) for s in sessions} == written
    finally:
        for s in sessions:
            await run_cypher(db, DELETE_SESSION, sid=s.id)
