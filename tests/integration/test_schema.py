"""The schema: applied idempotently at startup, versioned, enforced by Neo4j."""
import pytest

from service.errors import Conflict
from service.store import Database
from service.store.queries import load_migrations


async def test_apply_schema_is_idempotent_and_records_the_version(db: Database):
    latest = load_migrations()[-1].version
    first = await db.apply_schema()
    second = await db.apply_schema()
    assert first == second == latest
    rows = await db.read("schema_version_get")
    assert rows == [{"version": latest}]


async def test_uniqueness_constraints_exist(db: Database):
    rows, _, _ = await db.driver.execute_query(
        "SHOW CONSTRAINTS YIELD labelsOrTypes, properties, type RETURN *")
    unique = {(r["labelsOrTypes"][0], r["properties"][0]) for r in rows
              if r["type"] == "UNIQUENESS"}
    assert {("Session", "id"), ("Node", "id"), ("Call", "id")} <= unique


async def test_a_duplicate_id_is_a_conflict_not_a_crash(ledger, monkeypatch):
    session = await ledger.sessions.create()
    monkeypatch.setattr("service.store.head.new_id", lambda prefix: session.root_id)
    with pytest.raises(Conflict):
        await ledger.head.append_message(session.id, "user", "same id as ROOT")
    assert await ledger.violations(session.id) == []
