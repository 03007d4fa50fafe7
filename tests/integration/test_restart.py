"""A restart of Neo4j itself: the data and HEAD survive (same home directory, same port)."""
import asyncio

import pytest

from service.config import Settings
from service.errors import Unavailable
from service.neo4j_local import LocalNeo4j, ensure_jars, free_port
from service.store import Database, Ledger, Limits, open_driver
from service.store.queries import load_migrations
from tests.integration.helpers import chat


async def test_sessions_nodes_and_head_survive_a_neo4j_restart(tmp_path):
    lib = await asyncio.to_thread(ensure_jars, Settings.from_env().cache_dir)
    server = LocalNeo4j(tmp_path / "home", free_port(), lib, heap="512m", pagecache_mb=64)
    uri = await asyncio.to_thread(server.start)
    # The launcher's settings reach Neo4j: full-text segments are merged ten at a time
    # (service/neo4j_local/Launcher.java), which Neo4j logs among its settings at start.
    settings = (tmp_path / "home" / "logs" / "debug.log").read_text()
    assert "internal.dbms.index.lucene.merge_factor=10" in settings
    try:
        driver = open_driver(uri)
        ledger = Ledger.open(Database(driver), "restart", Limits())
        await ledger.db.apply_schema()
        session = await ledger.sessions.create("survivor", "sys")
        u1, a1, u2, a2 = await chat(ledger, session, "q1", "a1", "q2", "a2")
        edited = (await ledger.head.edit(u2.id, "q2 edited")).node
        await ledger.head.set_head(session.id, a2.id)
        before = (await ledger.sessions.get(session.id),
                  await ledger.branches.list(session.id))

        await asyncio.to_thread(server.stop)
        # While it is down, calls fail with a coded error instead of hanging.
        with pytest.raises(Unavailable):
            await asyncio.wait_for(ledger.sessions.get(session.id), timeout=120)
        await asyncio.to_thread(server.start)

        # The same driver recovers by itself once Neo4j is back.
        assert await ledger.db.apply_schema() == load_migrations()[-1].version
        after = (await ledger.sessions.get(session.id),
                 await ledger.branches.list(session.id))
        assert after == before
        assert after[0].head_id == a2.id
        assert {b.tip.id for b in after[1]} == {a2.id, edited.id}
        assert await ledger.violations(session.id) == []
        await driver.close()
    finally:
        await asyncio.to_thread(server.stop)
