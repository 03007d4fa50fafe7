"""Migration 007: a branch deletion that took the session's active summary used to leave
ACTIVE_SUMMARY pointing at it. The stale pointer is made here with plain Cypher, as the old
deletion left it: the session's edge to the deleted summary, which stayed unsuperseded."""
from service.store import Ledger, Limits
from service.store.backup import export_session, import_session
from service.store.queries import load_migrations
from tests.integration.helpers import (
    DELETE_SESSION, broken_sessions, chat, make_compactor, rendered, run_cypher,
    turns as texts,
)

STALE_POINTER = """
MATCH (s:Session {id: $sid}), (x:Node {id: $summary_id})
WHERE x.deleted_at IS NOT NULL AND NOT EXISTS { (s)-[:ACTIVE_SUMMARY]->() }
CREATE (s)-[:ACTIVE_SUMMARY]->(x)
SET x.superseded_summary = false
"""

POINTER = """
MATCH (s:Session {id: $sid})
RETURN [(s)-[:ACTIVE_SUMMARY]->(a:Node) | a.id] AS active,
  COLLECT { MATCH (x:Node {session_id: s.id, role: 'summary'})
            RETURN [x.id, x.superseded_summary] ORDER BY x.seq } AS superseded
"""


async def migrate(db):
    """Migration 007's statements, as apply_schema runs them (over the whole store)."""
    migration = next(m for m in load_migrations() if m.name == "deleted_active_summary")
    assert migration.version == 7
    for statement in migration.statements:
        await db.driver.execute_query(statement)


async def stale_session(ledger, db):
    """Four turns compacted (s3), the second question edited and that branch compacted
    (s5, replacing s3), the branch deleted: the pointer left on s5, as before the fix."""
    compactor = make_compactor(ledger)
    session = await ledger.sessions.create("stale pointer", "sys")
    t = await chat(ledger, session, *texts(4))
    s3 = (await compactor.compact(session.id, keep_recent_tokens=1)).summary.id
    edited = await ledger.head.edit(t[2].id, "Question 001, edited. ".ljust(100, "x"))
    await chat(ledger, session, "Answer 001, edited. ".ljust(100, "x"), start_with="assistant")
    s5 = (await compactor.compact(session.id, keep_recent_tokens=1)).summary.id
    deleted = await ledger.head.delete_branch(session.id, (await ledger.sessions.get(
        session.id)).head_id)
    assert {edited.node.id, s5} <= set(deleted.deleted_ids)
    await run_cypher(db, STALE_POINTER, sid=session.id, summary_id=s5)
    return session, t, s3, s5, compactor


async def test_the_migration_removes_a_pointer_at_a_deleted_summary(ledger, db, tenant):
    session, t, s3, s5, _ = await stale_session(ledger, db)
    try:
        assert await ledger.violations(session.id) == [f"summary: active {s5} is deleted"]
        before = await rendered(ledger, session.id, t[-1].id)
        assert before == [session.root_id, *(n.id for n in t)]  # s3 is a relic

        await migrate(db)

        assert await run_cypher(db, POINTER, sid=session.id) == [
            {"active": [], "superseded": [[s3, True], [s5, True]]}]
        assert await broken_sessions(db, Limits(), tenant) == {}
        assert (await ledger.sessions.get(session.id)).active_summary_id is None
        assert await rendered(ledger, session.id, t[-1].id) == before
        graph = await run_cypher(db, POINTER, sid=session.id)
        await migrate(db)  # idempotent
        assert await run_cypher(db, POINTER, sid=session.id) == graph
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)


async def test_a_summary_that_replaced_the_stale_pointer_restores_nothing(ledger, db):
    """A compaction while the pointer was stale recorded REPLACED to the deleted summary
    (the migration leaves it): undoing it restores nothing, not what that one replaced."""
    session, t, s3, s5, compactor = await stale_session(ledger, db)
    try:
        s7 = (await compactor.compact(session.id, head_id=t[-1].id,
                                      keep_recent_tokens=1)).summary
        assert await run_cypher(db, "MATCH (:Node {id: $x})-[:REPLACED]->(r) RETURN r.id AS r",
                                x=s7.id) == [{"r": s5}]
        await migrate(db)
        assert await ledger.violations(session.id) == []

        retired = await ledger.summaries.retire(s7.id)
        assert retired.restored_id is None
        assert (await ledger.sessions.get(session.id)).active_summary_id is None
        assert await rendered(ledger, session.id, t[-1].id) == [session.root_id,
                                                                *(n.id for n in t)]
        assert await ledger.violations(session.id) == []
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)


async def test_an_export_with_the_stale_pointer_is_imported_as_the_migration_leaves_it(
        ledger, db, tenant):
    session, t, s3, s5, _ = await stale_session(ledger, db)
    other = f"{tenant}-imported"
    try:
        document = await export_session(db, tenant, session.id, Limits())
        assert document["session"]["active_summary_id"] == s5
        await run_cypher(db, DELETE_SESSION, sid=session.id)

        assert await import_session(db, other, document, Limits()) == session.id
        imported = Ledger.open(db, other, Limits())
        assert await imported.violations(session.id) == []
        assert await run_cypher(db, POINTER, sid=session.id) == [
            {"active": [], "superseded": [[s3, True], [s5, True]]}]
        assert (await imported.sessions.get(session.id)).active_summary_id is None
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)
