"""Backup: a session exported, removed and imported again answers every query as before."""
import argparse
import copy
import dataclasses
import json
import uuid

import pytest

from service import admin_cli
from service.errors import BadInput, Conflict, NotFound
from service.store import CallRecord, Ledger, Limits, Purpose
from service.store.backup import FORMAT, INFORMATION_KEYS, export_session, import_session
from service.store.ids import utcnow
from tests.integration.helpers import KEEP_FOUR, assert_sound, chat, snapshot, turns as texts

# Temporal and other property types the ledger does not write itself, set on one node to
# show that every stored value survives, not only the ledger's own UTC datetimes.
EXTRA_PROPERTIES = """
MATCH (n:Node {id: $node_id})
SET n.zoned = datetime('2024-10-27T02:30:12.123456789+01:00[Europe/Berlin]'),
    n.offset = datetime('2024-05-01T10:11:12.000000001-03:30'),
    n.utc = datetime('2024-05-01T10:11:12Z'),
    n.local = localdatetime('2024-05-01T10:11:12.5'),
    n.day = date('2024-02-29'),
    n.clock = time('23:59:59.999999999+05:45'),
    n.local_clock = localtime('00:00:01'),
    n.wait = duration('P1Y2M3DT4.000000005S'),
    n.weights = [0.5, 1.0, -2.25],
    n.flags = [true, false],
    n.stamps = [datetime('2020-01-01T00:00:00.000000001+00:00')]
"""

TEMPORALS_AS_TEXT = """
MATCH (n:Node {session_id: $sid})
RETURN n.id AS id, COLLECT {
  UNWIND keys(n) AS k
  WITH n, k WHERE k <> 'tenant'
  RETURN [k, valueType(n[k]),
          CASE WHEN n[k] :: LIST<ANY> THEN [x IN n[k] | toString(x)] ELSE toString(n[k]) END]
  ORDER BY k
} AS values
ORDER BY id
"""

RAW_VALUES = """
MATCH (n:Node {session_id: $sid}) WHERE n.zoned IS NOT NULL
RETURN n.id AS id, n.created_at AS created_at, n.zoned AS zoned, n.wait AS wait
"""

DELETE_SESSION = """
MATCH (s:Session {id: $sid})
OPTIONAL MATCH (n:Node {session_id: $sid})
OPTIONAL MATCH (c:Call {session_id: $sid})
DETACH DELETE s, n, c
"""


async def run_cypher(db, text, **params):
    records, _, _ = await db.driver.execute_query(text, params)
    return [r.data() for r in records]


async def build_rich_session(ledger, compactor, turns):
    """Forks, two compactions, a spawned task, a deleted branch and a failed call."""
    session = await ledger.sessions.create("backup", "You are terse.",
                                           extra_meta={"project": "ctxdag", "n": 3})
    m = await chat(ledger, session, *texts(8))
    assert (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    after = await turns.send_message(session.id, "Question 008. ".ljust(100, "x"))
    await turns.edit(m[6].id, "Question 006, again. ".ljust(100, "x"))
    await ledger.head.set_head(session.id, after.reply.id)
    await chat(ledger, session, *texts(4, start=10))
    assert (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    task = await turns.spawn_task(session.id, after.reply.id, "Look into this aside.")
    assert task.reply.side_branch
    doomed = await turns.edit(m[4].id, "Question 004, to be deleted. ".ljust(100, "x"))
    await ledger.head.set_head(session.id, after.reply.id)
    await ledger.head.delete_branch(session.id, doomed.reply.id)
    now = utcnow()
    await ledger.calls.record(session.id, CallRecord(
        Purpose.CHAT, "offline", "offline-1", (session.root_id, after.reply.id), now, now,
        head_id=after.reply.id, error_code="MODEL_UNAVAILABLE", error_message="overloaded"))
    await ledger.sessions.update(session.id, title="backup, renamed", set_title=True)
    await run_cypher(ledger.db, EXTRA_PROPERTIES, node_id=m[1].id)
    await assert_sound(ledger, session.id)
    return session


async def observe(ledger, session_id, node_ids):
    """Every answer the ledger gives about the session (the tenant aside)."""
    session = dataclasses.replace(await ledger.sessions.get(session_id), tenant=None)
    branches = await ledger.branches.list(session_id)
    renders = [await ledger.views.render(session_id)]
    renders += [await ledger.views.render(session_id, b.tip.id) for b in branches]
    nodes = await ledger.nodes.get_many(node_ids)
    calls = await ledger.calls.get_many([c.id for c in await ledger.calls.in_session(session_id)])
    reads = [await ledger.calls.reads(c.id) for c in calls]
    summaries = [await ledger.summaries.get(n.id) for n in nodes if n.role.value == "summary"]
    children = [await ledger.nodes.children(n.id) for n in nodes if not n.deleted]
    return {"session": session, "branches": branches, "renders": renders, "nodes": nodes,
            "calls": calls, "reads": reads, "summaries": summaries, "children": children,
            "violations": await ledger.violations(session_id)}


def without_information(document):
    return {k: v for k, v in document.items() if k not in INFORMATION_KEYS}


@pytest.fixture
def other_tenant():
    return f"test-{uuid.uuid4().hex[:12]}"


async def test_a_session_survives_export_removal_and_import(
        ledger, compactor, turns, db, tenant, other_tenant):
    session = await build_rich_session(ledger, compactor, turns)
    db.round_trips.by_name.clear()
    document = await export_session(db, tenant, session.id)
    assert db.round_trips.by_name == {"backup_export": 1}
    assert document["format"] == FORMAT and document["version"] == 1
    assert document["source_tenant"] == tenant
    node_ids = [n["properties"]["id"] for n in document["nodes"]]
    kinds = {(n["properties"]["role"], "deleted_at" in n["properties"],
              n["properties"].get("superseded_summary")) for n in document["nodes"]}
    assert {("summary", False, True), ("summary", False, False), ("user", True, None)} <= kinds
    assert any(n["caller_id"] for n in document["nodes"])
    assert any(c["properties"].get("error_code") for c in document["calls"])
    assert all("tenant" not in n["properties"] for n in document["nodes"])

    before = await observe(ledger, session.id, node_ids)
    assert len(before["branches"]) >= 2 and before["summaries"] and before["calls"]
    values_before = await run_cypher(db, TEMPORALS_AS_TEXT, sid=session.id)
    raw_before = await run_cypher(db, RAW_VALUES, sid=session.id)

    # What is written to a file is what is read back.
    text = json.dumps(document)
    assert json.loads(text) == document

    await run_cypher(db, DELETE_SESSION, sid=session.id)
    with pytest.raises(NotFound):
        await ledger.sessions.get(session.id)

    db.round_trips.by_name.clear()
    assert await import_session(db, other_tenant, json.loads(text)) == session.id
    assert db.round_trips.by_name == {"backup_import": 1}

    imported = Ledger.open(db, other_tenant, Limits())
    again = await export_session(db, other_tenant, session.id)
    assert again["source_tenant"] == other_tenant
    assert without_information(again) == without_information(document)
    assert await observe(imported, session.id, node_ids) == before
    assert before["violations"] == []

    # Temporal values are the same values in Neo4j, zones and nanoseconds included.
    assert await run_cypher(db, TEMPORALS_AS_TEXT, sid=session.id) == values_before
    raw_after = await run_cypher(db, RAW_VALUES, sid=session.id)
    assert raw_after == raw_before
    assert raw_after[0]["zoned"].tzinfo.zone == "Europe/Berlin"
    assert raw_after[0]["zoned"].nanosecond == 123456789
    # The old tenant no longer sees it; the new one owns every node and call.
    with pytest.raises(NotFound):
        await ledger.sessions.get(session.id)
    owners = await run_cypher(db, "MATCH (x {session_id: $sid}) RETURN DISTINCT x.tenant AS t",
                              sid=session.id)
    assert owners == [{"t": other_tenant}]


async def test_importing_an_existing_session_is_a_conflict_and_writes_nothing(
        ledger, turns, db, tenant, other_tenant):
    session = await ledger.sessions.create("twice", "sys")
    await turns.send_message(session.id, "Hello.")
    document = await export_session(db, tenant, session.id)
    before = (await _store_counts(db, session.id), await snapshot(ledger, session.id))
    for target in (tenant, other_tenant):
        with pytest.raises(Conflict, match=f"session {session.id} already exists"):
            await import_session(db, target, document)
    assert (await _store_counts(db, session.id), await snapshot(ledger, session.id)) == before

    # A fresh session id over the same node and call ids is refused by name, too.
    renamed = copy.deepcopy(document)
    fresh = f"ses_{uuid.uuid4().hex}"
    renamed["session"]["properties"]["id"] = fresh
    for row in renamed["nodes"] + renamed["calls"]:
        row["properties"]["session_id"] = fresh
    with pytest.raises(Conflict, match="ids already exist"):
        await import_session(db, other_tenant, renamed)
    assert await _store_counts(db, fresh) == {"sessions": 0, "nodes": 0, "calls": 0}


async def _store_counts(db, session_id):
    rows = await run_cypher(
        db, "RETURN COUNT { (:Session {id: $sid}) } AS sessions, "
            "COUNT { (:Node {session_id: $sid}) } AS nodes, "
            "COUNT { (:Call {session_id: $sid}) } AS calls", sid=session_id)
    return rows[0]


def _set(path, value):
    """A change of the document: the field at `path` set to `value`."""
    def change(document):
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return document
    return change


def _drop(path):
    def change(document):
        target = document
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
        return document
    return change


def _duplicate_node(document):
    document["nodes"].append(copy.deepcopy(document["nodes"][1]))
    return document


MALFORMED = {
    "not an object": lambda d: [d],
    "wrong format": _set(["format"], "something-else"),
    "newer version": _set(["version"], 2),
    "boolean version": _set(["version"], True),
    "unknown field": _set(["extra"], 1),
    "nodes not a list": _set(["nodes"], {"a": 1}),
    "node without properties": _drop(["nodes", 1, "properties"]),
    "node id not a string": _set(["nodes", 1, "properties", "id"], 7),
    "node of another session": _set(["nodes", 1, "properties", "session_id"], "ses_other"),
    "unknown role": _set(["nodes", 1, "properties", "role"], "oracle"),
    "duplicate node": _duplicate_node,
    "unknown predecessor": _set(["nodes", 1, "predecessor_id"], "nod_nowhere"),
    "head outside the document": _set(["session", "head_id"], "nod_nowhere"),
    "read of an unknown node": _set(["calls", 0, "reads", 0, "node_id"], "nod_nowhere"),
    "bad datetime": _set(["nodes", 1, "properties", "created_at"], {"datetime": "yesterday"}),
    "datetime without offset": _set(["nodes", 1, "properties", "created_at"],
                                    {"datetime": "2024-01-01T00:00:00"}),
    "unknown zone": _set(["nodes", 1, "properties", "created_at"],
                         {"datetime": "2024-01-01T00:00:00+00:00[Nowhere/Land]"}),
    "untagged object": _set(["nodes", 1, "properties", "metadata"], {"a": "b"}),
    "nested list": _set(["nodes", 1, "properties", "tags"], [["a"]]),
    "non-integer position": _set(["calls", 0, "reads", 0, "position"], "0"),
    # Well-formed, but not a sound session: the in-transaction check refuses these.
    "depth out of order": _set(["nodes", 1, "properties", "depth"], 5),
    "gap in read positions": _set(["calls", 0, "reads", 1, "position"], 2),
    "wrong read_count": _set(["calls", 0, "properties", "read_count"], 9),
}


@pytest.mark.parametrize("change", MALFORMED.values(), ids=MALFORMED.keys())
async def test_a_malformed_document_is_bad_input_and_writes_nothing(
        ledger, turns, db, tenant, change):
    session = await ledger.sessions.create("bad", "sys")
    await turns.send_message(session.id, "Hello.")
    document = await export_session(db, tenant, session.id)
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    broken = change(copy.deepcopy(document))
    with pytest.raises(BadInput):
        await import_session(db, tenant, broken)
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}
    # The ids were free all along: the untouched document imports.
    assert await import_session(db, tenant, document) == session.id
    await assert_sound(ledger, session.id)


async def test_export_of_a_missing_or_foreign_session_is_not_found(ledger, db, other_tenant):
    session = await ledger.sessions.create()
    with pytest.raises(NotFound):
        await export_session(db, other_tenant, session.id)
    with pytest.raises(NotFound):
        await export_session(db, other_tenant, "ses_missing")


async def test_an_unsound_session_is_not_exported(ledger, turns, db, tenant):
    session = await ledger.sessions.create()
    first = await turns.send_message(session.id, "Hello.")
    await run_cypher(db, "MATCH (s:Session {id: $sid}), (n:Node {id: $nid}) "
                         "CREATE (s)-[:HEAD]->(n)", sid=session.id, nid=first.user_node.id)
    with pytest.raises(Conflict, match="HEAD: 2 relationships"):
        await export_session(db, tenant, session.id)
    await run_cypher(db, DELETE_SESSION, sid=session.id)  # leave no broken session behind


def admin(*argv):
    parser = argparse.ArgumentParser()
    admin_cli.add_commands(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


async def test_export_and_import_from_the_command_line(
        ledger, turns, db, tenant, other_tenant, tmp_path, capsys):
    session = await ledger.sessions.create("cli", "sys")
    await turns.send_message(session.id, "Hello.")
    assert await admin_cli.run(admin("export", session.id), db, tenant) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["session"]["properties"]["id"] == session.id

    file = tmp_path / "backup.json"
    assert await admin_cli.run(admin("export", session.id, "--output", str(file)), db,
                               tenant) == 0
    assert str(file) in capsys.readouterr().out
    assert without_information(json.loads(file.read_text())) == without_information(printed)

    await run_cypher(db, DELETE_SESSION, sid=session.id)
    assert await admin_cli.run(admin("import", str(file)), db, other_tenant) == 0
    assert capsys.readouterr().out.strip() == session.id
    assert await admin_cli.run(admin("check", session.id), db, other_tenant) == 0
    assert capsys.readouterr().out.strip() == "ok: 1 sessions checked"

    with pytest.raises(Conflict):
        await admin_cli.run(admin("import", str(file)), db, other_tenant)
    (tmp_path / "junk.json").write_text("{not json")
    with pytest.raises(BadInput, match="not a JSON document"):
        await admin_cli.run(admin("import", str(tmp_path / "junk.json")), db, tenant)
    with pytest.raises(BadInput, match="cannot read"):
        await admin_cli.run(admin("import", str(tmp_path / "missing.json")), db, tenant)
