"""The whole-store invariant check: silent on sound sessions, names the broken ones."""

import pytest

from service.errors import NotFound
from service.store import Limits
from tests.integration.helpers import (
    KEEP_FOUR, broken_sessions, chat, run_command, runtime_for, turns as texts,
)

SECOND_HEAD = """
MATCH (s:Session {id: $sid})-[:ROOT]->(r:Node)
CREATE (s)-[:HEAD]->(r)
"""

# ROOT <- u <- a <- u2 <- a2 becomes ROOT  u -> a2 -> u2 -> a -> u: a cycle cut off from ROOT.
PREDECESSOR_CYCLE = """
MATCH (u:Node {id: $first})-[old:PREDECESSOR]->(:Node)
MATCH (last:Node {id: $last})
DELETE old
CREATE (u)-[:PREDECESSOR]->(last)
"""

FOREIGN_READ = """
MATCH (c:Call {id: $call_id}), (n:Node {id: $node_id})
CREATE (c)-[:READ {position: c.read_count}]->(n)
SET c.read_count = c.read_count + 1
"""

READ_GAP = """
MATCH (:Call {id: $call_id})-[r:READ]->()
WITH r ORDER BY r.position DESC LIMIT 1
SET r.position = r.position + 1
"""

DELETE_SESSION = """
MATCH (s:Session {id: $sid})
OPTIONAL MATCH (n:Node {session_id: $sid})
OPTIONAL MATCH (c:Call {session_id: $sid})
DETACH DELETE s, n, c
"""


async def run_cypher(db, text, **params):
    await db.driver.execute_query(text, params)


@pytest.fixture
async def corrupted(db):
    """Session ids to remove after the test: a broken session is never left behind."""
    ids = []
    yield ids
    for session_id in ids:
        await run_cypher(db, DELETE_SESSION, sid=session_id)


async def sound_sessions(ledger, compactor, turns):
    plain = await ledger.sessions.create("plain", "sys")
    await chat(ledger, plain, *texts(4))
    compacted = await ledger.sessions.create("compacted", "sys")
    await chat(ledger, compacted, *texts(8))
    await compactor.compact(compacted.id, keep_recent_tokens=KEEP_FOUR)
    await turns.send_message(compacted.id, "And now?")
    empty = await ledger.sessions.create()
    return [plain, compacted, empty]


async def test_sound_sessions_have_no_violations(ledger, compactor, turns, db, tenant):
    sessions = await sound_sessions(ledger, compactor, turns)
    db.round_trips.by_name.clear()
    assert await broken_sessions(db, Limits(), tenant) == {}
    assert db.round_trips.by_name == {"check_session_ids": 1, "check_session": len(sessions)}


async def test_corrupted_sessions_are_named_with_their_violations(
        ledger, compactor, turns, db, tenant, corrupted):
    sound = await sound_sessions(ledger, compactor, turns)

    two_heads = await ledger.sessions.create("two heads")
    await chat(ledger, two_heads, "Q. ".ljust(20, "x"), "A. ".ljust(20, "x"))
    corrupted.append(two_heads.id)
    await run_cypher(db, SECOND_HEAD, sid=two_heads.id)

    cycle = await ledger.sessions.create("cycle")
    chain = await chat(ledger, cycle, *texts(4))
    corrupted.append(cycle.id)
    await run_cypher(db, PREDECESSOR_CYCLE, first=chain[0].id, last=chain[-1].id)

    foreign = await ledger.sessions.create("foreign read")
    reply = (await turns.send_message(foreign.id, "Hello.")).call_id
    corrupted.append(foreign.id)
    await run_cypher(db, FOREIGN_READ, call_id=reply, node_id=sound[0].root_id)

    gap = await ledger.sessions.create("read gap")
    gap_call = (await turns.send_message(gap.id, "Hello.")).call_id
    corrupted.append(gap.id)
    await run_cypher(db, READ_GAP, call_id=gap_call)

    found = await broken_sessions(db, Limits(), tenant)
    assert set(found) == {two_heads.id, cycle.id, foreign.id, gap.id}
    assert "HEAD: the session has 2 HEAD relationships" in found[two_heads.id]
    assert any(v.startswith(f"PREDECESSOR: {chain[0].id} -> {chain[-1].id}")
               for v in found[cycle.id])
    assert f"READ: call {reply} reads {sound[0].root_id}, which is not a node of this " \
           "session" in found[foreign.id]
    assert found[gap.id] == [f"READ: call {gap_call} has 2 READ edges for a read_count of 2, "
                             "or their positions are not 0..n-1"]
    assert await ledger.violations(two_heads.id) == found[two_heads.id]

    # Without a tenant every tenant's sessions are checked; ours are among them.
    everywhere = await broken_sessions(db, Limits())
    assert {two_heads.id, cycle.id, foreign.id, gap.id} <= set(everywhere)
    assert not {s.id for s in sound} & set(everywhere)
    assert await broken_sessions(db, Limits(), "test-no-such-tenant") == {}


async def admin(db, tenant, *argv):
    """`ctxdag ARGV` for `tenant`, in-process, on the parts built from its settings."""
    return await run_command(runtime_for(db, tenant), *argv)


async def test_check_from_the_command_line(ledger, compactor, turns, db, tenant, corrupted,
                                           capsys):
    sessions = await sound_sessions(ledger, compactor, turns)
    assert await admin(db, tenant, "check") == 0
    assert capsys.readouterr().out == f"ok: {len(sessions)} sessions checked\n"
    assert await admin(db, tenant, "check", sessions[0].id) == 0
    assert capsys.readouterr().out == "ok: 1 sessions checked\n"

    corrupted.append(sessions[0].id)
    await run_cypher(db, SECOND_HEAD, sid=sessions[0].id)
    assert await admin(db, tenant, "check") == 1
    out = capsys.readouterr()
    assert out.out == f"{sessions[0].id}: HEAD: the session has 2 HEAD relationships\n"
    assert "1 of 3 sessions" in out.err
    assert await admin(db, tenant, "check", sessions[0].id) == 1
    assert capsys.readouterr().out.startswith(f"{sessions[0].id}: HEAD:")
    with pytest.raises(NotFound):
        await admin(db, tenant, "check", "ses_missing")
