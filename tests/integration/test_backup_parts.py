"""A long session's backup restored in parts (service/store/backup_parts.py): the session
`ctxdag import` restores a part of nodes at a time is the one the document describes, as a
restore at once makes it; a document refused, a part refused and a write that fails
midway leave nothing behind."""
import copy
import json

import pytest

from service.errors import BadInput, Conflict, Unavailable
from service.store import Ledger, Limits, backup_parts
from service.store.backup import export_session
from service.store.db import Database
from tests.integration.helpers import (
    DELETE_SESSION, agent_session, assert_sound, run_cypher, two_compactions,
)
from tests.integration.test_backup import (
    SUMMARY_GRAPH, TENANT_MEDIA, _store_counts, admin, build_rich_session, legacy_document,
    observe, other_tenant, record_of, tool_state, without_information,
)

__all__ = ["other_tenant"]  # a fixture

PART = 3

LEFT = """
RETURN COUNT { (:Session {id: $sid}) } AS sessions,
  COUNT { (:Node {session_id: $sid}) } AS nodes,
  COUNT { (:ToolUse {session_id: $sid}) } AS tool_uses,
  COUNT { (:Call {session_id: $sid}) } AS calls,
  COUNT { (:PendingImport {session_id: $sid}) } AS claims,
  COUNT { (:Media {tenant: $tenant}) } AS media
"""
NOTHING = {"sessions": 0, "nodes": 0, "tool_uses": 0, "calls": 0, "claims": 0, "media": 0}


@pytest.fixture
def in_parts(monkeypatch):
    """Every document restored in parts of PART nodes."""
    monkeypatch.setattr(backup_parts, "IN_PARTS_FROM", 0)
    monkeypatch.setattr(backup_parts, "PART_NODES", PART)


async def left(db, session_id, tenant):
    return (await run_cypher(db, LEFT, sid=session_id, tenant=tenant))[0]


async def restored(db, tenant, document) -> str:
    """The document restored in parts, each part one statement and the session one more."""
    db.round_trips.by_name.clear()
    session_id = await backup_parts.restore(db, tenant, json.loads(json.dumps(document)),
                                            Limits())
    writes = {name: count for name, count in db.round_trips.by_name.items()
              if name.startswith("transcript_")}
    assert writes == {"transcript_pending_stale": 1, "transcript_pending_claim": 1,
                      "transcript_pending_clear": 1,
                      "transcript_import_part": -(-len(document["nodes"]) // PART),
                      "transcript_import_session": 1}
    return session_id


async def test_a_rich_session_restored_in_parts_answers_as_before(
        ledger, compactor, turns, db, tenant, other_tenant, in_parts):
    """Forks, two compactions, a spawned task, a deleted branch, a failed call, exact
    timestamps: every answer the ledger gives is the one it gave before."""
    session, _ = await build_rich_session(ledger, compactor, turns)
    document = await export_session(db, tenant, session.id, Limits())
    node_ids = [n["properties"]["id"] for n in document["nodes"]]
    assert len(node_ids) > 4 * PART
    before = await observe(ledger, session.id, node_ids)
    await run_cypher(db, DELETE_SESSION, sid=session.id)

    assert await restored(db, other_tenant, document) == session.id
    again = await export_session(db, other_tenant, session.id, Limits())
    assert without_information(again) == without_information(document)
    assert await observe(Ledger.open(db, other_tenant, Limits()), session.id, node_ids) == before
    assert (await left(db, session.id, other_tenant))["claims"] == 0


async def test_an_agent_session_restored_in_parts_keeps_its_tool_pairs_and_media(
        ledger, compactor, db, tenant, other_tenant, in_parts):
    """Each medium is carried by the first part naming it; a later part naming it finds it
    stored. Tool uses and their answers, in different parts, are paired as before."""
    session, _ = await agent_session(ledger, compactor)
    await assert_sound(ledger, session.id)
    document = await export_session(db, tenant, session.id, Limits())
    assert len(document["media"]) == 2
    before = await tool_state(ledger, session.id)
    await run_cypher(db, DELETE_SESSION, sid=session.id)

    assert await restored(db, other_tenant, document) == session.id
    imported = Ledger.open(db, other_tenant, Limits())
    assert await imported.violations(session.id) == []
    again = await export_session(db, other_tenant, session.id, Limits())
    assert without_information(again) == without_information(document)
    assert await tool_state(imported, session.id) == before
    assert await run_cypher(db, TENANT_MEDIA, tenant=other_tenant) == [
        {"sha256": m["sha256"]} for m in document["media"]]


async def test_a_legacy_export_restored_in_parts_takes_the_new_shape(
        ledger, compactor, db, tenant, other_tenant, in_parts):
    """The document is checked (and upgraded) whole before its parts are cut from it."""
    session, t, s1, s2 = await two_compactions(ledger, compactor)
    document = await export_session(db, tenant, session.id, Limits())
    graph = await run_cypher(db, SUMMARY_GRAPH, sid=session.id)
    legacy = legacy_document(document)
    legacy["nodes"].reverse()  # the absorbing summary before the absorbed one: no matter
    await run_cypher(db, DELETE_SESSION, sid=session.id)

    db.round_trips.by_name.clear()
    assert await backup_parts.restore(db, other_tenant, legacy, Limits()) == session.id
    assert db.round_trips.by_name["transcript_import_part"] == -(-len(legacy["nodes"]) // PART)
    assert await Ledger.open(db, other_tenant, Limits()).violations(session.id) == []
    assert await run_cypher(db, SUMMARY_GRAPH, sid=session.id) == graph
    assert record_of(await export_session(db, other_tenant, session.id, Limits()),
                     s2)["replaced_id"] == s1


async def test_a_refused_document_writes_nothing_not_even_a_claim(
        ledger, compactor, db, tenant, other_tenant, in_parts):
    session, ids = await agent_session(ledger, compactor)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    broken = copy.deepcopy(document)
    broken["nodes"][-1]["predecessor_id"] = "nod_nowhere"
    db.round_trips.by_name.clear()
    with pytest.raises(BadInput, match="must name a node of the document"):
        await backup_parts.restore(db, other_tenant, broken, Limits())
    assert db.round_trips.by_name == {}
    assert await left(db, session.id, other_tenant) == NOTHING


async def test_media_a_part_names_neither_carried_nor_stored_are_refused_and_cleared(
        ledger, compactor, db, tenant, other_tenant, in_parts):
    """A document that names media it does not carry is found out by the part naming them
    (the store holds them or not): the parts before it are cleared."""
    session, ids = await agent_session(ledger, compactor)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    uncarried = {**copy.deepcopy(document), "media": []}
    with pytest.raises(BadInput, match="names media"):
        await backup_parts.restore(db, other_tenant, uncarried, Limits())
    assert await left(db, session.id, other_tenant) == NOTHING
    # Where the tenant stores them, the document need not carry them.
    assert await backup_parts.restore(db, tenant, uncarried, Limits()) == session.id
    assert await Ledger.open(db, tenant, Limits()).violations(session.id) == []


async def test_a_write_failing_midway_or_at_the_end_leaves_nothing(
        ledger, compactor, db, tenant, other_tenant, in_parts, monkeypatch):
    session, ids = await agent_session(ledger, compactor)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    write = Database.write
    for failing, at in (("transcript_import_part", 2), ("transcript_import_session", 0)):
        seen = []

        async def fails(self, name, /, check=None, **params):
            if name == failing:
                seen.append(name)
                if len(seen) > at:
                    raise Unavailable("Neo4j is unreachable: the test cut it")
            return await write(self, name, check, **params)

        monkeypatch.setattr(Database, "write", fails)
        with pytest.raises(Unavailable, match="the test cut it"):
            await backup_parts.restore(db, other_tenant, document, Limits())
        assert await left(db, session.id, other_tenant) == NOTHING, failing
    monkeypatch.setattr(Database, "write", write)
    assert await restored(db, other_tenant, document) == session.id


async def test_a_session_restored_twice_is_a_conflict_and_the_first_stays(
        ledger, turns, db, tenant, other_tenant, in_parts):
    session = await ledger.sessions.create("twice", "sys")
    for text in ("Hello.", "And again.", "Once more."):
        await turns.send_message(session.id, text)
    document = await export_session(db, tenant, session.id, Limits())
    before = await _store_counts(db, session.id)
    with pytest.raises(Conflict, match=f"session {session.id} already exists"):
        await backup_parts.restore(db, tenant, document, Limits())
    assert await _store_counts(db, session.id) == before
    assert (await left(db, session.id, tenant))["claims"] == 0
    assert await ledger.violations(session.id) == []


async def test_import_from_the_command_line_restores_a_long_session_in_parts(
        ledger, turns, db, tenant, other_tenant, tmp_path, capsys, in_parts):
    session = await ledger.sessions.create("cli", "sys")
    for text in ("Hello.", "And again.", "Once more."):
        await turns.send_message(session.id, text)
    file = tmp_path / "backup.json"
    assert await admin(db, tenant, "export", session.id, "--output", str(file)) == 0
    capsys.readouterr()
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    db.round_trips.by_name.clear()
    assert await admin(db, other_tenant, "import", str(file)) == 0
    assert capsys.readouterr().out.strip() == session.id
    assert db.round_trips.by_name["transcript_import_part"] == 3  # 7 nodes, 3 a part
    assert await Ledger.open(db, other_tenant, Limits()).violations(session.id) == []


async def test_a_node_naming_a_later_one_is_refused_before_any_write(
        ledger, turns, db, tenant, other_tenant, in_parts):
    """A restore at once places every node wherever the document lists it; parts are
    written in seq order, so a node naming one of a higher seq is refused up front."""
    session = await ledger.sessions.create("order", "sys")
    for text in ("Hello.", "And again.", "Once more."):
        await turns.send_message(session.id, text)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    swapped = copy.deepcopy(document)
    first, last = swapped["nodes"][1]["properties"], swapped["nodes"][-1]["properties"]
    first["seq"], last["seq"] = last["seq"], first["seq"]
    db.round_trips.by_name.clear()
    with pytest.raises(BadInput, match="is named by a node that comes before it in seq "
                       "order") as refused:
        await backup_parts.restore(db, other_tenant, swapped, Limits())
    # The last turn now comes second, its predecessor after it; the first turn, after its reply.
    assert refused.value.message.startswith(
        (f"node '{swapped['nodes'][-2]['properties']['id']}'", f"node '{first['id']}'"))
    assert db.round_trips.by_name == {}
    assert await left(db, session.id, other_tenant) == NOTHING


async def test_a_taken_session_id_is_refused_by_the_first_part(
        ledger, turns, db, tenant, other_tenant, in_parts):
    """Under new node and call ids, the session id alone is taken: the first part says so,
    in either tenant, and nothing more is written."""
    session = await ledger.sessions.create("taken", "sys")
    for text in ("Hello.", "And again.", "Once more."):
        await turns.send_message(session.id, text)
    document = json.dumps(await export_session(db, tenant, session.id, Limits()))
    for row in json.loads(document)["nodes"] + json.loads(document)["calls"]:
        document = document.replace(row["properties"]["id"], row["properties"]["id"] + "x")
    before = await _store_counts(db, session.id)
    for into, says in ((tenant, f"session {session.id} already exists"),
                       (other_tenant, "the document's session id is already used by another "
                                      "tenant")):
        db.round_trips.by_name.clear()
        with pytest.raises(Conflict, match=says):
            await backup_parts.restore(db, into, json.loads(document), Limits())
        assert db.round_trips.by_name["transcript_import_part"] == 1
        assert "transcript_import_session" not in db.round_trips.by_name
        assert (await left(db, session.id, into))["claims"] == 0
    assert await _store_counts(db, session.id) == before
    assert await ledger.violations(session.id) == []
