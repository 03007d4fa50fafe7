"""Migration 011: sessions stored before sessions were listed get their first and last
activity (their creation and last write) and the models of their calls, first use first.
The properties are removed here with plain Cypher, as such a session was stored."""
from service.model import listing
from service.store.queries import load_migrations
from tests.integration.helpers import run_cypher

UNLISTED = """
MATCH (s:Session {id: $sid})
REMOVE s.first_activity_at, s.last_activity_at, s.models
RETURN s.created_at AS created, s.updated_at AS updated
"""


async def migrate(db):
    migration = next(m for m in load_migrations() if m.name == "session_listing")
    assert migration.version == 11
    for statement in migration.statements:
        await db.driver.execute_query(statement)


async def test_the_migration_lists_a_session_stored_before_by_its_writes_and_calls(
        ledger, turns, db):
    session = await ledger.sessions.create("Old")
    await turns.record_call(session.id, [session.root_id], "model-b", output="One")
    await turns.record_call(session.id, [session.root_id], "model-a")
    await turns.record_call(session.id, [session.root_id], "model-b", output="Two")
    [stored] = await run_cypher(db, UNLISTED, sid=session.id)
    assert (await ledger.sessions.list(keep=listing.Filter())).items == ()  # unlisted

    await migrate(db)

    migrated = await ledger.sessions.get(session.id)
    assert migrated.models == ("model-b", "model-a")
    assert migrated.first_activity_at == stored["created"].to_native()
    assert migrated.last_activity_at == stored["updated"].to_native()
    assert [s.id for s in (await ledger.sessions.list(order="last_activity")).items] == [
        session.id]
    await migrate(db)  # idempotent
    assert await ledger.sessions.get(session.id) == migrated
