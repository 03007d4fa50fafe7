"""Migration 003: summaries stored the old way (COVERS to the whole segment) take the new shape.

The legacy summaries are written here with plain Cypher, exactly as the old compaction
wrote them: every summary held COVERS edges to its whole segment (orders
0..covers_count-1), with no covers_new_count, ABSORBED, REPLACED, replaced_id,
compacted_head_id or retained_ids.
"""
from service.store import Limits
from service.model.ids import new_id
from service.store.queries import load_migrations
from service.tokens import estimate_tokens
from tests.integration.helpers import (
    DELETE_SESSION, broken_sessions, chat, rendered, run_cypher, turns as texts,
)

# A summary as the old compaction wrote it: spliced after the segment's predecessor,
# COVERS in chain order to the WHOLE segment, the session's active summary moved onto it.
LEGACY_SUMMARY = """
MATCH (s:Session {id: $sid})
SET s.next_seq = s.next_seq + 1
WITH s, s.next_seq - 1 AS seq
MATCH (first:Node {id: $covered[0]})-[:PREDECESSOR]->(splice:Node)
OPTIONAL MATCH (s)-[old:ACTIVE_SUMMARY]->(active:Node)
SET active.superseded_summary = true
DELETE old
CREATE (x:Node {
  id: $summary_id, session_id: s.id, tenant: s.tenant, role: 'summary', content: $content,
  created_at: datetime(), tokens: $tokens, metadata: '{"summarizer": "legacy"}', seq: seq,
  depth: splice.depth + 1, side_branch: splice.side_branch, strategy: 'rolling',
  superseded_summary: false, absorbed_id: $absorbed_id, covers_count: size($covered),
  covers_first_id: $covered[0], covers_last_id: $covered[-1]
})
CREATE (x)-[:PREDECESSOR]->(splice)
CREATE (s)-[:ACTIVE_SUMMARY]->(x)
WITH x
UNWIND range(0, size($covered) - 1) AS i
MATCH (t:Node {id: $covered[i]})
CREATE (x)-[:COVERS {order: i}]->(t)
"""

# Before the summary strategies a session had no summary_version.
LEGACY_SESSION = "MATCH (s:Session {id: $sid}) REMOVE s.summary_version"

SUMMARY_SHAPE = """
MATCH (x:Node {session_id: $sid, role: 'summary'})
RETURN x.id AS id, x.covers_count AS covers_count, x.covers_new_count AS covers_new_count,
  x.covers_first_id AS first, x.covers_last_id AS last, x.replaced_id AS replaced_id,
  COLLECT { MATCH (x)-[c:COVERS]->(t:Node) RETURN [c.order, t.id] ORDER BY c.order } AS covers,
  [(x)-[:ABSORBED]->(a:Node) | a.id] AS absorbed, [(x)-[:REPLACED]->(r:Node) | r.id] AS replaced
ORDER BY x.seq
"""

# Everything the migration could touch in a session: every node's properties and edges.
SESSION_GRAPH = """
MATCH (n:Node {session_id: $sid})
RETURN n.id AS id, properties(n) AS properties,
  COLLECT { MATCH (n)-[r]->(m) RETURN [type(r), properties(r), m.id] ORDER BY type(r), m.id,
            r.order } AS edges
ORDER BY n.seq
"""

async def migrate(db):
    """Migration 003's statements, as apply_schema runs them (over the whole store), and
    009's, which an upgrade from then applies too (the summaries' ENDS_AT edges)."""
    migrations = {m.name: m for m in load_migrations()}
    assert (migrations["summary_coverage"].version, migrations["summary_ends"].version) == (3, 9)
    for migration in (migrations["summary_coverage"], migrations["summary_ends"]):
        for statement in migration.statements:
            await db.driver.execute_query(statement)


async def legacy_summary(db, session_id, covered, absorbed_id=None):
    summary_id = new_id("nod")
    content = f"Legacy summary of {len(covered)} turns."
    await run_cypher(db, LEGACY_SUMMARY, sid=session_id, summary_id=summary_id,
                     covered=[t.id for t in covered], absorbed_id=absorbed_id,
                     content=content, tokens=estimate_tokens(content))
    return summary_id


async def legacy_session(ledger, db):
    """ROOT and twelve turns, three rolling summaries of 4, 6 and 8 turns, each absorbing
    the one before (its COVERS naming the whole segment), as the old compaction left them."""
    session = await ledger.sessions.create("legacy", "sys")
    t = await chat(ledger, session, *texts(12))
    await run_cypher(db, LEGACY_SESSION, sid=session.id)
    s1 = await legacy_summary(db, session.id, t[:4])
    s2 = await legacy_summary(db, session.id, t[:6], absorbed_id=s1)
    s3 = await legacy_summary(db, session.id, t[:8], absorbed_id=s2)
    return session, t, (s1, s2, s3)


def expected_shape(t, s1, s2, s3):
    covers = lambda turns: [[i, turn.id] for i, turn in enumerate(turns)]  # noqa: E731
    common = {"first": t[0].id}
    return [
        {"id": s1, "covers_count": 4, "covers_new_count": 4, "last": t[3].id,
         "replaced_id": None, "covers": covers(t[0:4]), "absorbed": [], "replaced": [],
         **common},
        {"id": s2, "covers_count": 6, "covers_new_count": 2, "last": t[5].id,
         "replaced_id": s1, "covers": covers(t[4:6]), "absorbed": [s1], "replaced": [s1],
         **common},
        {"id": s3, "covers_count": 8, "covers_new_count": 2, "last": t[7].id,
         "replaced_id": s2, "covers": covers(t[6:8]), "absorbed": [s2], "replaced": [s2],
         **common},
    ]


async def test_the_migration_converts_a_legacy_session_and_check_is_clean(
        ledger, db, tenant):
    session, t, (s1, s2, s3) = await legacy_session(ledger, db)
    try:
        before = await ledger.violations(session.id)
        # The old shape is not the new one: check names each summary's missing count.
        for summary_id in (s1, s2, s3):
            assert f"property: node {summary_id}: covers_new_count is missing" in before

        await migrate(db)

        assert await run_cypher(db, SUMMARY_SHAPE, sid=session.id) == expected_shape(
            t, s1, s2, s3)
        assert await ledger.violations(session.id) == []
        assert await broken_sessions(db, Limits(), tenant) == {}
        # The whole segment is still what each summary stands for.
        assert (await ledger.summaries.get(s3)).covers_ids == tuple(n.id for n in t[:8])
        assert (await ledger.summaries.get(s2)).covers_ids == tuple(n.id for n in t[:6])
        assert await rendered(ledger, session.id) == [session.root_id, s3,
                                                      *(n.id for n in t[8:])]

        # Idempotent: a second run changes nothing.
        graph = await run_cypher(db, SESSION_GRAPH, sid=session.id)
        await migrate(db)
        assert await run_cypher(db, SESSION_GRAPH, sid=session.id) == graph
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)


async def test_the_absorbed_count_comes_from_its_property_not_its_edges(ledger, db):
    """A legacy summary whose absorbed summary was converted already (its COVERS edges cut
    down to the turns it newly covered) is converted by the same rule."""
    session = await ledger.sessions.create("half converted", "sys")
    t = await chat(ledger, session, *texts(10))
    try:
        s1 = await legacy_summary(db, session.id, t[:4])
        s2 = await legacy_summary(db, session.id, t[:6], absorbed_id=s1)
        await migrate(db)
        s3 = await legacy_summary(db, session.id, t[:8], absorbed_id=s2)
        assert len((await run_cypher(db, SUMMARY_SHAPE, sid=session.id))[1]["covers"]) == 2

        await migrate(db)

        assert await run_cypher(db, SUMMARY_SHAPE, sid=session.id) == expected_shape(
            t, s1, s2, s3)
        assert await ledger.violations(session.id) == []
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)


async def test_deleting_a_branch_deletes_the_summaries_absorbing_its_turns(ledger, db):
    """After the migration the first turns are covered by s1 alone; s2 and s3 hold them
    through ABSORBED, and go with them."""
    session, t, (s1, s2, s3) = await legacy_session(ledger, db)
    try:
        await migrate(db)
        other = await ledger.head.edit(t[0].id, "Question 000, asked otherwise. ".ljust(100, "x"))
        deleted = await ledger.head.delete_branch(session.id, t[-1].id)
        assert deleted.fork_point_id == session.root_id
        assert set(deleted.deleted_ids) == {n.id for n in t} | {s1, s2, s3}
        assert other.node.id not in deleted.deleted_ids
        assert await ledger.violations(session.id) == []
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)


async def test_a_dangling_absorbed_id_is_left_for_check_to_name(ledger, db):
    """A legacy summary naming an absorbed summary that is not stored keeps its edges; the
    migration gives it a count (so it runs once), and check names it."""
    session = await ledger.sessions.create("dangling", "sys")
    t = await chat(ledger, session, *texts(6))
    try:
        gone = new_id("nod")
        s1 = await legacy_summary(db, session.id, t[:4], absorbed_id=gone)
        await migrate(db)
        shape = (await run_cypher(db, SUMMARY_SHAPE, sid=session.id))[0]
        assert (shape["covers_new_count"], shape["absorbed"], len(shape["covers"])) == (4, [], 4)
        found = await ledger.violations(session.id)
        assert (f"ABSORBED: {s1} has 0 ABSORBED relationships for absorbed_id {gone}, "
                "not one to that node") in found
        assert f"property: node {s1}: absorbed_id '{gone}' is not a node of this session" in found
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)
