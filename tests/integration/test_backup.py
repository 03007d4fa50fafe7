"""Backup: a session exported, removed and imported again answers every query as before."""
import base64
import copy
import dataclasses
import hashlib
import json
import uuid

import pytest

from service.errors import BadInput, Conflict, NotFound
from service.store import CallRecord, Ledger, Limits, Purpose, backup
from service.store.backup import (
    FORMAT, INFORMATION_KEYS, VERSION, export_session, import_session,
)
from service.tokens import estimate_tokens
from service.model.ids import utcnow
from tests.integration.helpers import (
    DELETE_SESSION, KEEP_FOUR, agent_session, assert_sound, broken_sessions, chat, run_command,
    run_cypher, runtime_for, session_calls, snapshot, turns as texts, two_compactions,
)

# Timestamps the ledger does not write itself (it writes UTC to the microsecond), set on
# a node, the session and a call to show that a stored value survives exactly: zones,
# offsets and nanoseconds included.
EXACT_TIMESTAMPS = """
MATCH (n:Node {id: $node_id}), (s:Session {id: n.session_id})
MATCH (c:Call {session_id: n.session_id}) WITH n, s, c ORDER BY c.started_at LIMIT 1
SET n.created_at = datetime('2024-10-27T02:30:12.123456789+01:00[Europe/Berlin]'),
    s.updated_at = datetime('2024-05-01T10:11:12.000000001-03:30'),
    c.started_at = datetime('2020-01-01T00:00:00.000000001Z')
"""

TIMESTAMPS_AS_TEXT = """
MATCH (x {session_id: $sid}) WHERE NOT x:Event  // events are not exported
RETURN x.id AS id, COLLECT {
  UNWIND keys(x) AS k
  WITH x, k WHERE k <> 'tenant'
  RETURN [k, valueType(x[k]),
          CASE WHEN x[k] IS :: LIST<ANY> THEN [v IN x[k] | toString(v)] ELSE toString(x[k]) END]
  ORDER BY k
} AS values
ORDER BY id
"""

RAW_VALUES = """
MATCH (n:Node {id: $node_id}), (s:Session {id: n.session_id})
RETURN n.created_at AS created_at, s.updated_at AS updated_at
"""

FOCUS = "Focus on the questions, in full."


async def build_rich_session(ledger, compactor, turns):
    """Forks, two compactions, a spawned task, a deleted branch and a failed call."""
    session = await ledger.sessions.create("backup", "You are terse.",
                                           extra_meta={"project": "ctxdag", "n": 3})
    m = await chat(ledger, session, *texts(8))
    assert (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR,
                                    instructions=FOCUS)).summary
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
    await run_cypher(ledger.db, EXACT_TIMESTAMPS, node_id=m[1].id)
    await assert_sound(ledger, session.id)
    return session, m[1].id


async def observe(ledger, session_id, node_ids):
    """Every answer the ledger gives about the session (the tenant aside)."""
    session = dataclasses.replace(await ledger.sessions.get(session_id), tenant=None)
    branches = await ledger.branches.list(session_id)
    renders = [await ledger.views.render(session_id)]
    renders += [await ledger.views.render(session_id, b.tip.id) for b in branches]
    nodes = await ledger.nodes.get_many(node_ids)
    calls = await ledger.calls.get_many([c.id for c in await session_calls(ledger, session_id)])
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
    session, exact_id = await build_rich_session(ledger, compactor, turns)
    db.round_trips.by_name.clear()
    document = await export_session(db, tenant, session.id, Limits())
    assert db.round_trips.by_name == {"backup_export": 1}
    assert document["format"] == FORMAT and document["version"] == VERSION == 5
    assert document["media"] == []
    assert document["source_tenant"] == tenant
    node_ids = [n["properties"]["id"] for n in document["nodes"]]
    kinds = {(n["properties"]["role"], "deleted_at" in n["properties"],
              n["properties"].get("superseded_summary")) for n in document["nodes"]}
    assert {("summary", False, True), ("summary", False, False), ("user", True, None)} <= kinds
    assert any(n["caller_id"] for n in document["nodes"])
    # The first summary was compacted with focus instructions, the second without.
    assert sorted(str(n["properties"].get("instructions")) for n in document["nodes"]
                  if n["properties"]["role"] == "summary") == [FOCUS, "None"]
    assert any(c["properties"].get("error_code") for c in document["calls"])
    assert all("tenant" not in n["properties"] for n in document["nodes"])

    before = await observe(ledger, session.id, node_ids)
    assert len(before["branches"]) >= 2 and before["summaries"] and before["calls"]
    values_before = await run_cypher(db, TIMESTAMPS_AS_TEXT, sid=session.id)
    raw_before = await run_cypher(db, RAW_VALUES, node_id=exact_id)

    # What is written to a file is what is read back.
    text = json.dumps(document)
    assert json.loads(text) == document

    await run_cypher(db, DELETE_SESSION, sid=session.id)
    with pytest.raises(NotFound):
        await ledger.sessions.get(session.id)

    db.round_trips.by_name.clear()
    assert await import_session(db, other_tenant, json.loads(text), Limits()) == session.id
    assert db.round_trips.by_name == {"backup_import": 1}

    imported = Ledger.open(db, other_tenant, Limits())
    again = await export_session(db, other_tenant, session.id, Limits())
    assert again["source_tenant"] == other_tenant
    assert without_information(again) == without_information(document)
    assert await observe(imported, session.id, node_ids) == before
    assert [s.instructions for s in before["summaries"]] == [FOCUS, None]
    assert before["violations"] == []

    # Timestamps are the same values in Neo4j, zones and nanoseconds included.
    assert await run_cypher(db, TIMESTAMPS_AS_TEXT, sid=session.id) == values_before
    raw_after = await run_cypher(db, RAW_VALUES, node_id=exact_id)
    assert raw_after == raw_before
    assert raw_after[0]["created_at"].tzinfo.zone == "Europe/Berlin"
    assert raw_after[0]["created_at"].nanosecond == 123456789
    assert raw_after[0]["updated_at"].utcoffset().total_seconds() == -3.5 * 3600
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
    document = await export_session(db, tenant, session.id, Limits())
    before = (await _store_counts(db, session.id), await snapshot(ledger, session.id))
    with pytest.raises(Conflict, match=f"session {session.id} already exists"):
        await import_session(db, tenant, document, Limits())
    # Another tenant learns that the id is taken, never which ids another tenant holds.
    with pytest.raises(Conflict, match="already used by another tenant") as elsewhere:
        await import_session(db, other_tenant, document, Limits())
    assert session.id not in elsewhere.value.message
    assert (await _store_counts(db, session.id), await snapshot(ledger, session.id)) == before

    # A fresh session id over the same node and call ids: the importing tenant's own ids
    # are named, another tenant's are only counted.
    renamed = copy.deepcopy(document)
    fresh = f"ses_{uuid.uuid4().hex}"
    renamed["session"]["properties"]["id"] = fresh
    for row in renamed["nodes"] + renamed["calls"]:
        row["properties"]["session_id"] = fresh
    taken = [row["properties"]["id"] for row in document["nodes"] + document["calls"]]
    with pytest.raises(Conflict, match="ids already exist") as own:
        await import_session(db, tenant, renamed, Limits())
    assert all(taken_id in own.value.message for taken_id in taken)
    with pytest.raises(Conflict) as foreign:
        await import_session(db, other_tenant, renamed, Limits())
    assert foreign.value.message == (f"session {fresh} cannot be imported: {len(taken)} of its "
                                     "node or call ids are already used by another tenant")
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
    "newer version": _set(["version"], 6),
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
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    broken = change(copy.deepcopy(document))
    with pytest.raises(BadInput):
        await import_session(db, tenant, broken, Limits())
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}
    # The ids were free all along: the untouched document imports.
    assert await import_session(db, tenant, document, Limits()) == session.id
    await assert_sound(ledger, session.id)


BIG = "x" * (Limits().max_content_bytes + 1)

# Values the API could never have written, each on one record of `bad_value_session`:
# the record ("session", a node's role or a call's purpose), the properties set on it
# (None removes one) and what the refusal (import) or violation (check) says.
BAD_VALUES = {
    "metadata not JSON": ("user", {"metadata": "not json{"}, "metadata is not valid JSON"),
    "metadata not an object": ("user", {"metadata": "[1]"}, "metadata must be a JSON object"),
    "metadata with NaN": ("user", {"metadata": '{"a": NaN}'}, "NaN is not a JSON number"),
    "metadata nested 10k deep": ("assistant", {"metadata": "[" * 10_000 + "]" * 10_000},
                                  "metadata nests too deeply"),
    "metadata nested 40 deep": ("user", {"metadata": '{"a": ' * 40 + "{}" + "}" * 40},
                                "metadata nests objects and arrays more than 32 deep"),
    "metadata over the limit": ("assistant", {"metadata": json.dumps({"k": "v" * 65_536})},
                                "metadata is 65545 bytes of JSON; the limit is 65536"),
    "metadata missing": ("user", {"metadata": None}, "metadata is missing"),
    "extra_meta broken": ("session", {"extra_meta": "{broken"}, "extra_meta is not valid JSON"),
    "extra_meta not an object": ("session", {"extra_meta": "5"},
                                 "extra_meta must be a JSON object"),
    "extra_meta with a reserved key": ("session", {"extra_meta": '{"_last_summary_id": "x"}'},
                                       "reserved for ctxdag itself: _last_summary_id"),
    "title of 100k characters": ("session", {"title": "t" * 100_000},
                                 "title is 100000 characters; the limit is 200"),
    "title not a string": ("session", {"title": 5}, "title must be a string"),
    "next_seq a boolean": ("session", {"next_seq": True}, "next_seq must be an integer"),
    "content over the limit": ("user", {"content": BIG, "tokens": estimate_tokens(BIG)},
                               "content is 1048577 bytes; the limit is 1048576"),
    "blank content": ("assistant", {"content": " \n ", "tokens": 1}, "content is empty"),
    "tokens not the estimate": ("user", {"tokens": 10**9},
                                "tokens is 1000000000, not the estimate of the content"),
    "a system node mid-chain": ("assistant", {"role": "system"},
                                "only the ROOT is a system node"),
    "a ROOT that is not a system node": ("system", {"role": "user"},
                                         "only the ROOT is a system node"),
    "a summary compaction did not write": ("user", {"role": "summary"}, "strategy is missing"),
    "a property the ledger never writes": ("user", {"color": "red"},
                                           "color is not a property the ledger writes"),
    "fork_of outside the session": ("assistant", {"fork_of": "nod_elsewhere"},
                                    "fork_of 'nod_elsewhere' is not a node of this session"),
    "model of 3 MB": ("external", {"model": "m" * 3_000_000},
                      "model is 3000000 characters; the limit is 200"),
    "empty provider": ("chat", {"provider": ""}, "provider must be a non-empty string"),
    "unknown purpose": ("chat", {"purpose": "gossip"}, "purpose 'gossip' is not one of"),
    "error code too long": ("chat", {"error_code": "E" * 201, "error_message": "failed"},
                            "error_code is 201 characters; the limit is 200"),
    "error text over the limit": ("chat", {"error_code": "MODEL_ERROR", "error_message": BIG},
                                  "error_message is 1048577 bytes"),
    "negative usage": ("external", {"input_tokens": -1}, "input_tokens must be an integer"),
    "timestamp as text": ("chat", {"started_at": "2024-01-01T00:00:00Z"},
                          "started_at must be a datetime"),
    "head_id outside the session": ("chat", {"head_id": "nod_elsewhere"},
                                    "head_id 'nod_elsewhere' is not a node of this session"),
    "external reads over the cap": ("external", {"read_count": 10_001},
                                    "read_count is 10001; a recorded call may read at most"),
    "unknown summary strategy": ("session", {"summary_strategy": "sideways"},
                                 "summary_strategy must be one of 'rolling', 'branch', "
                                 "'segmented', not 'sideways'"),
    "negative summary_version": ("session", {"summary_version": -1},
                                 "summary_version must be an integer from 0"),
    "summary_version as text": ("session", {"summary_version": "3"},
                                "summary_version must be an integer from 0"),
}


async def bad_value_session(ledger, turns):
    """A session with ROOT, a user turn, a reply, its chat call and an external call;
    returns it and the id of each record BAD_VALUES names."""
    session = await ledger.sessions.create("values", "sys", extra_meta={"k": 1})
    turn = await turns.send_message(session.id, "Hello.")
    external = await turns.record_call(session.id, [session.root_id, turn.user_node.id],
                                       "their-model", usage={"input_tokens": 3})
    return session, {"session": session.id, "system": session.root_id,
                     "user": turn.user_node.id, "assistant": turn.reply.id,
                     "chat": turn.call_id, "external": external.id}


def record_of(document, record_id):
    if document["session"]["properties"]["id"] == record_id:
        return document["session"]["properties"]
    return next(row["properties"] for row in document["nodes"] + document["calls"]
                if row["properties"]["id"] == record_id)


def set_properties(properties, values):
    for key, value in values.items():
        if value is None:
            properties.pop(key, None)
        else:
            properties[key] = value


@pytest.mark.parametrize("bad", BAD_VALUES.values(), ids=BAD_VALUES.keys())
async def test_import_refuses_a_value_the_api_could_not_write_naming_it(
        ledger, turns, db, tenant, bad):
    record, values, says = bad
    session, ids = await bad_value_session(ledger, turns)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    broken = copy.deepcopy(document)
    set_properties(record_of(broken, ids[record]), values)
    with pytest.raises(BadInput) as caught:
        await import_session(db, tenant, broken, Limits())
    assert says in caught.value.message and ids[record] in caught.value.message
    assert len(caught.value.message) < 1000
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}
    assert await import_session(db, tenant, document, Limits()) == session.id
    await assert_sound(ledger, session.id)


SET_PROPERTIES = "MATCH (x {id: $id}) WHERE x:Session OR x:Node OR x:Call SET x += $values"


@pytest.mark.parametrize("bad", BAD_VALUES.values(), ids=BAD_VALUES.keys())
async def test_check_names_a_stored_value_the_api_could_not_write(
        ledger, turns, db, tenant, bad, capsys):
    record, values, says = bad
    session, ids = await bad_value_session(ledger, turns)
    assert await ledger.violations(session.id) == []
    try:
        await run_cypher(db, SET_PROPERTIES, id=ids[record], values=values)
        found = await broken_sessions(db, Limits(), tenant)
        assert list(found) == [session.id]
        assert any(says in v and ids[record] in v for v in found[session.id]), found
        assert await admin(db, tenant, "check") == 1
        assert says in capsys.readouterr().out
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)


def _read_twice(document):
    external = next(c for c in document["calls"] if c["properties"]["purpose"] == "external")
    external["reads"].append({"node_id": external["reads"][0]["node_id"], "position": 2})
    external["properties"]["read_count"] = 3
    return external["properties"]["id"], "reads name 1 nodes more than once"


def _seq_beyond_64_bits(document):
    document["nodes"][1]["properties"]["seq"] = 2**64
    return document["nodes"][1]["properties"]["id"], "seq is an integer beyond 64 bits"


def _position_beyond_64_bits(document):
    document["calls"][0]["reads"][0]["position"] = 2**64
    return document["calls"][0]["properties"]["id"], "reads[0].position must be an integer"


def _lone_surrogate_model(document):
    document["calls"][0]["properties"]["model"] = "claude\ud800"
    return document["calls"][0]["properties"]["id"], "model is not valid Unicode text"


def _created_at(text, says):
    def change(document):
        document["nodes"][1]["properties"]["created_at"] = {"datetime": text}
        return document["nodes"][1]["properties"]["id"], f"created_at {says}"
    return change


# Values Neo4j cannot even store, and reads the API refuses: import-only cases.
IMPORT_ONLY = {"read twice": _read_twice, "seq beyond 64 bits": _seq_beyond_64_bits,
               "position beyond 64 bits": _position_beyond_64_bits,
               "lone surrogate in a model": _lone_surrogate_model,
               # The driver sends a timestamp's UTC instant, within years 1 to 9999.
               "a timestamp before year 1 in UTC": _created_at(
                   "0001-01-01T00:00:00.000000000+14:00", "lies outside years 1 to 9999"),
               "a timestamp after 9999 in UTC": _created_at(
                   "9999-12-31T23:00:00.000000000-14:00", "lies outside years 1 to 9999"),
               "an offset beyond 18 hours": _created_at(
                   "2020-01-01T00:00:00.000000000+23:00", "has an offset Neo4j cannot hold")}


@pytest.mark.parametrize("change", IMPORT_ONLY.values(), ids=IMPORT_ONLY.keys())
async def test_import_refuses_what_neo4j_cannot_store_or_the_api_refuses(
        ledger, turns, db, tenant, change):
    session, _ = await bad_value_session(ledger, turns)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    broken = copy.deepcopy(document)
    record_id, says = change(broken)
    with pytest.raises(BadInput) as caught:
        await import_session(db, tenant, broken, Limits())
    assert says in caught.value.message and record_id in caught.value.message
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}


async def test_import_applies_the_importing_service_read_cap(ledger, turns, db, tenant):
    session, ids = await bad_value_session(ledger, turns)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    with pytest.raises(BadInput, match=f"call {ids['external']}: read_count is 2; a recorded "
                                       "call may read at most 1 nodes"):
        await import_session(db, tenant, document, Limits(max_call_reads=1))
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}
    assert await import_session(db, tenant, document, Limits(max_call_reads=2)) == session.id


async def test_check_names_a_call_that_reads_a_node_twice(ledger, turns, db, tenant):
    session, ids = await bad_value_session(ledger, turns)
    try:
        await run_cypher(db, READ_AGAIN, call_id=ids["external"])
        assert await ledger.violations(session.id) == [
            f"READ: call {ids['external']} reads 1 nodes more than once"]
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)


READ_AGAIN = """
MATCH (c:Call {id: $call_id})-[r:READ {position: 0}]->(x:Node)
CREATE (c)-[:READ {position: c.read_count}]->(x)
SET c.read_count = c.read_count + 1
"""


async def test_export_of_a_missing_or_foreign_session_is_not_found(ledger, db, other_tenant):
    session = await ledger.sessions.create()
    with pytest.raises(NotFound):
        await export_session(db, other_tenant, session.id, Limits())
    with pytest.raises(NotFound):
        await export_session(db, other_tenant, "ses_missing", Limits())


async def test_an_unsound_session_is_not_exported(ledger, turns, db, tenant):
    session = await ledger.sessions.create()
    first = await turns.send_message(session.id, "Hello.")
    await run_cypher(db, "MATCH (s:Session {id: $sid}), (n:Node {id: $nid}) "
                         "CREATE (s)-[:HEAD]->(n)", sid=session.id, nid=first.user_node.id)
    with pytest.raises(Conflict, match="HEAD: 2 relationships"):
        await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)  # leave no broken session behind


async def admin(db, tenant, *argv):
    """`ctxdag ARGV` for `tenant`, in-process, on the parts built from its settings."""
    return await run_command(runtime_for(db, tenant), *argv)


async def test_export_and_import_from_the_command_line(
        ledger, turns, db, tenant, other_tenant, tmp_path, capsys):
    session = await ledger.sessions.create("cli", "sys")
    await turns.send_message(session.id, "Hello.")
    assert await admin(db, tenant, "export", session.id) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["session"]["properties"]["id"] == session.id

    file = tmp_path / "backup.json"
    assert await admin(db, tenant, "export", session.id, "--output", str(file)) == 0
    assert str(file) in capsys.readouterr().out
    assert without_information(json.loads(file.read_text())) == without_information(printed)
    assert [path.name for path in tmp_path.iterdir()] == ["backup.json"]  # no part left

    await run_cypher(db, DELETE_SESSION, sid=session.id)
    assert await admin(db, other_tenant, "import", str(file)) == 0
    assert capsys.readouterr().out.strip() == session.id
    assert await admin(db, other_tenant, "check", session.id) == 0
    assert capsys.readouterr().out.strip() == "ok: 1 session checked"

    with pytest.raises(Conflict):
        await admin(db, other_tenant, "import", str(file))
    (tmp_path / "junk.json").write_text("{not json")
    with pytest.raises(BadInput, match="is not valid JSON"):
        await admin(db, tenant, "import", str(tmp_path / "junk.json"))
    with pytest.raises(BadInput, match="cannot read"):
        await admin(db, tenant, "import", str(tmp_path / "missing.json"))


async def summary_session(ledger, compactor, instructions=FOCUS):
    session = await ledger.sessions.create()
    await chat(ledger, session, *texts(8))
    summary = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR,
                                       instructions=instructions)).summary
    return session, summary


@pytest.mark.parametrize("values,says", [
    ({"instructions": " \n"}, "instructions are blank"),
    ({"instructions": "x" * 4001}, "instructions are 4001 characters; the limit is 4000"),
    ({"instructions": 5}, "instructions must be a string"),
    ({"instructions": None}, "instructions must be a string"),
])
async def test_import_and_check_apply_the_instructions_rule(
        ledger, compactor, db, tenant, values, says):
    session, summary = await summary_session(ledger, compactor)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    broken = copy.deepcopy(document)
    record_of(broken, summary.id).update(values)
    with pytest.raises(BadInput) as caught:
        await import_session(db, tenant, broken, Limits())
    assert says in caught.value.message and summary.id in caught.value.message
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}
    assert await import_session(db, tenant, document, Limits()) == session.id
    assert (await ledger.summaries.get(summary.id)).instructions == FOCUS
    await assert_sound(ledger, session.id)
    if values["instructions"] is not None:  # Neo4j cannot store a null
        try:
            await run_cypher(db, SET_PROPERTIES, id=summary.id, values=values)
            found = await broken_sessions(db, Limits(), tenant)
            assert any(says in v and summary.id in v for v in found[session.id]), found
        finally:
            await run_cypher(db, DELETE_SESSION, sid=session.id)


async def test_instructions_belong_on_summaries_only(ledger, compactor, db, tenant):
    session, summary = await summary_session(ledger, compactor, instructions=None)
    document = await export_session(db, tenant, session.id, Limits())
    assert "instructions" not in record_of(document, summary.id)
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    broken = copy.deepcopy(document)
    user = next(n["properties"] for n in broken["nodes"] if n["properties"]["role"] == "user")
    user["instructions"] = FOCUS
    with pytest.raises(BadInput, match="instructions is not a property the ledger writes"):
        await import_session(db, tenant, broken, Limits())
    assert await import_session(db, tenant, document, Limits()) == session.id
    assert (await ledger.summaries.get(summary.id)).instructions is None


# --- summaries: the storage of the summary strategies (docs/concepts/strategies.md) ------

LAST_YEAR = {"datetime": "2024-01-01T00:00:00+00:00"}

# Values the API could not have written on the records of `two_compactions`: the record
# (s1, s2 or the first turn t0), the properties set on it (None removes one; "{s1}", "{s2}"
# and "{t0}" name those records) and what import and check say.
BAD_SUMMARY_VALUES = {
    "covers_new_count zero": ("s2", {"covers_new_count": 0},
                              "covers_new_count must be an integer from 1"),
    "covers_new_count missing": ("s2", {"covers_new_count": None},
                                 "covers_new_count is missing"),
    "unknown strategy": ("s2", {"strategy": "sideways"},
                         "strategy must be one of 'rolling', 'branch', 'segmented', "
                         "not 'sideways'"),
    "retained_ids not a list": ("s2", {"retained_ids": "{t0}"},
                                "retained_ids must be a list of ids"),
    "retained_ids with an empty id": ("s2", {"retained_ids": [""]},
                                      "retained_ids[0] must be a non-empty string"),
    "retained_ids outside the session": ("s2", {"retained_ids": ["nod_elsewhere"]},
                                         "retained_ids 'nod_elsewhere' is not a node of this "
                                         "session"),
    "compacted_head_id empty": ("s2", {"compacted_head_id": ""},
                                "compacted_head_id must be a non-empty string"),
    "compacted_head_id outside the session": ("s2", {"compacted_head_id": "nod_elsewhere"},
                                              "compacted_head_id 'nod_elsewhere' is not a node "
                                              "of this session"),
    "replaced_id outside the session": ("s2", {"replaced_id": "nod_elsewhere"},
                                        "replaced_id 'nod_elsewhere' is not a node of this "
                                        "session"),
    "replaced_id naming a turn": ("s2", {"replaced_id": "{t0}"},
                                  "replaced_id '{t0}' is not a summary of this session"),
    "absorbed_id naming a turn": ("s2", {"absorbed_id": "{t0}"},
                                  "absorbed_id '{t0}' is not a summary of this session"),
    "retired_at as text": ("s1", {"retired_at": "2024-01-01T00:00:00Z"},
                           "retired_at must be a datetime"),
    "a turn retired": ("t0", {"retired_at": LAST_YEAR},
                       "retired_at is not a property the ledger writes on a node"),
    "a turn with retained_ids": ("t0", {"retained_ids": ["{t0}"]},
                                 "retained_ids is not a property the ledger writes on a node"),
}


def _named(value, ids):
    """`value` with "{s1}"-style names replaced by the ids of `two_compactions`' records."""
    if isinstance(value, str):
        return value.format(**ids)
    if isinstance(value, list):
        return [_named(v, ids) for v in value]
    return value


def _stored(value):
    """A document value as Neo4j stores it (a timestamp object becomes a datetime)."""
    from service.store.backup import _parse_datetime

    if isinstance(value, dict) and set(value) == {"datetime"}:
        return _parse_datetime(value["datetime"])
    return value


@pytest.mark.parametrize("bad", BAD_SUMMARY_VALUES.values(), ids=BAD_SUMMARY_VALUES.keys())
async def test_import_and_check_apply_the_summary_rules(ledger, compactor, db, tenant, bad):
    record, values, says = bad
    session, t, s1, s2 = await two_compactions(ledger, compactor)
    ids = {"s1": s1, "s2": s2, "t0": t[0].id}
    values = {key: _named(value, ids) for key, value in values.items()}
    says = says.format(**ids)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    broken = copy.deepcopy(document)
    set_properties(record_of(broken, ids[record]), values)
    with pytest.raises(BadInput) as caught:
        await import_session(db, tenant, broken, Limits())
    assert says in caught.value.message and ids[record] in caught.value.message
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}

    assert await import_session(db, tenant, document, Limits()) == session.id
    await assert_sound(ledger, session.id)
    try:
        await run_cypher(db, SET_PROPERTIES, id=ids[record],
                         values={k: _stored(v) for k, v in values.items() if v is not None})
        for key in [k for k, v in values.items() if v is None]:
            await run_cypher(db, "MATCH (x:Node {id: $id}) REMOVE x[$key]",
                             id=ids[record], key=key)
        found = await broken_sessions(db, Limits(), tenant)
        assert any(says in v and ids[record] in v for v in found[session.id]), found
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)


async def test_the_summary_strategies_values_survive_export_and_import(
        ledger, compactor, db, tenant, other_tenant):
    """A branch-strategy session with a summary_version and a retired summary, and every new
    summary property, come back exactly, ABSORBED and REPLACED edges included."""
    session, t, s1, s2 = await two_compactions(ledger, compactor)
    await run_cypher(db, "MATCH (s:Session {id: $sid}), (x:Node {id: $s1}), (y:Node {id: $s2}) "
                         "SET s.summary_strategy = 'branch', s.summary_version = 7, "
                         "x.retired_at = datetime(), y.strategy = 'branch'",
                     sid=session.id, s1=s1, s2=s2)
    await assert_sound(ledger, session.id)
    document = await export_session(db, tenant, session.id, Limits())
    summary = record_of(document, s2)
    assert (summary["absorbed_id"], summary["replaced_id"], summary["covers_new_count"],
            summary["covers_count"], summary["retained_ids"], summary["compacted_head_id"]) == (
        s1, s1, 4, 8, [n.id for n in t[8:]], t[11].id)
    assert [c["node_id"] for c in next(n for n in document["nodes"]
                                       if n["properties"]["id"] == s2)["covers"]] == [
        n.id for n in t[4:8]]
    assert "datetime" in record_of(document, s1)["retired_at"]
    graph = await run_cypher(db, SUMMARY_GRAPH, sid=session.id)

    await run_cypher(db, DELETE_SESSION, sid=session.id)
    assert await import_session(db, other_tenant, json.loads(json.dumps(document)),
                                Limits()) == session.id
    again = await export_session(db, other_tenant, session.id, Limits())
    assert without_information(again) == without_information(document)
    assert await run_cypher(db, SUMMARY_GRAPH, sid=session.id) == graph
    assert await Ledger.open(db, other_tenant, Limits()).violations(session.id) == []


# Each summary's edges, by type, with their properties.
SUMMARY_GRAPH = """
MATCH (x:Node {session_id: $sid, role: 'summary'})
RETURN x.id AS id,
  COLLECT { MATCH (x)-[r]->(m) RETURN [type(r), properties(r), m.id] ORDER BY type(r), m.id } AS edges
ORDER BY x.seq
"""

NEW_SUMMARY_PROPERTIES = ("covers_new_count", "compacted_head_id", "retained_ids", "replaced_id",
                          "retired_at")


def legacy_document(document):
    """`document` as an export written before migration 003: each summary lists its whole
    segment, and neither the session nor a summary holds what the summary strategies added."""
    legacy = copy.deepcopy(document)
    legacy["session"]["properties"].pop("summary_version", None)
    segments = {}
    for node in legacy["nodes"]:  # seq order: an absorbed summary comes first
        properties = node["properties"]
        if properties["role"] != "summary":
            continue
        own = [c["node_id"] for c in sorted(node["covers"], key=lambda c: c["order"])]
        segments[properties["id"]] = segments.get(properties.get("absorbed_id"), []) + own
        node["covers"] = [{"node_id": node_id, "order": i}
                          for i, node_id in enumerate(segments[properties["id"]])]
        for key in NEW_SUMMARY_PROPERTIES:
            properties.pop(key, None)
    return legacy


async def test_a_legacy_export_is_imported_in_the_new_shape(
        ledger, compactor, db, tenant, other_tenant):
    session, t, s1, s2 = await two_compactions(ledger, compactor)
    document = await export_session(db, tenant, session.id, Limits())
    legacy = legacy_document(document)
    assert len(next(n for n in legacy["nodes"]
                    if n["properties"]["id"] == s2)["covers"]) == 8
    legacy["nodes"].reverse()  # the absorbing summary before the absorbed one: no matter
    await run_cypher(db, DELETE_SESSION, sid=session.id)

    # All or nothing: a legacy summary whose list is not its whole segment is refused.
    cut = copy.deepcopy(legacy)
    next(n for n in cut["nodes"] if n["properties"]["id"] == s2)["covers"].pop()
    with pytest.raises(BadInput, match=f"node {s2}: covers_new_count is missing"):
        await import_session(db, other_tenant, cut, Limits())
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}

    assert await import_session(db, other_tenant, legacy, Limits()) == session.id
    imported = Ledger.open(db, other_tenant, Limits())
    assert await imported.violations(session.id) == []
    # What a legacy export cannot know stays unknown (no retained_ids or compacted_head_id);
    # the replaced summary is taken to be the absorbed one, as migration 003 takes it, and the
    # session's summary version starts at 0, as migration 005 starts it. Everything else is
    # the session as it was.
    expected = copy.deepcopy(document)
    expected["session"]["properties"]["summary_version"] = 0
    for node in expected["nodes"]:
        for key in ("compacted_head_id", "retained_ids"):
            node["properties"].pop(key, None)
    again = await export_session(db, other_tenant, session.id, Limits())
    assert without_information(again) == without_information(expected)
    assert record_of(again, s2)["replaced_id"] == s1
    assert (await imported.summaries.get(s2)).covers_ids == tuple(n.id for n in t[:8])
    rows = await run_cypher(db, SUMMARY_GRAPH, sid=session.id)
    assert [[e[0] for e in row["edges"]] for row in rows] == [
        ["COVERS"] * 4 + ["ENDS_AT", "PREDECESSOR"],
        ["ABSORBED"] + ["COVERS"] * 4 + ["ENDS_AT", "PREDECESSOR", "REPLACED"]]


# --- content blocks: tool pairs and media (docs/concepts/content-blocks.md) -------

# What an import rebuilds from the nodes' blocks and the chain, each edge with its properties.
TOOL_GRAPH = """
MATCH (n:Node {session_id: $sid})
RETURN n.id AS id,
  COLLECT { MATCH (n)-[u:USES]->(t:ToolUse)
            RETURN [u.order, t.id, t.name, t.session_id] AS use ORDER BY u.order } AS uses,
  COLLECT { MATCH (n)-[a:ANSWERS]->(t:ToolUse)<-[:USES]-(p:Node)
            RETURN [t.id, a.is_error, p.id] AS answer ORDER BY t.id } AS answers,
  COLLECT { MATCH (n)-[:CARRIES]->(m:Media)
            RETURN [m.sha256, m.media_type, m.bytes] AS medium ORDER BY m.sha256 } AS carries
ORDER BY n.seq
"""

TENANT_MEDIA = "MATCH (m:Media {tenant: $tenant}) RETURN m.sha256 AS sha256 ORDER BY sha256"
TOOL_USE_TENANTS = "MATCH (t:ToolUse {session_id: $sid}) RETURN DISTINCT t.tenant AS tenant"


async def tool_state(ledger, session_id):
    """Each branch tip's render, and the tool uses, answers and media edges the store holds."""
    return {"renders": await tips_rendered(ledger, session_id),
            "graph": await run_cypher(ledger.db, TOOL_GRAPH, sid=session_id)}


async def tips_rendered(ledger, session_id):
    """Each branch tip's render: the node ids and blocks the model reads there."""
    tips = sorted(b.tip.id for b in await ledger.branches.list(session_id))
    return {tip: [(n.id, n.blocks) for n in (await ledger.views.render(session_id, tip)).nodes]
            for tip in tips}


async def test_an_agent_session_round_trips_its_blocks_tool_pairs_and_media(
        ledger, compactor, db, tenant, other_tenant):
    session, ids = await agent_session(ledger, compactor)
    await assert_sound(ledger, session.id)
    document = await export_session(db, tenant, session.id, Limits())
    assert document["version"] == VERSION
    image, pdf = (await ledger.nodes.get(ids["ask"])).blocks[1].source, \
        (await ledger.nodes.get(ids["again"])).blocks[1].source
    media = {m["sha256"]: m for m in document["media"]}
    assert [m["sha256"] for m in document["media"]] == sorted([image.sha256, pdf.sha256])
    assert (media[pdf.sha256]["media_type"], media[pdf.sha256]["bytes"]) == (
        "application/pdf", pdf.bytes)
    assert media[image.sha256]["data"] == (await ledger.nodes.media([image.sha256]))[image.sha256]
    call = record_of(document, ids["call"])
    assert call["tool_use_ids"] == ["toolu_a", "toolu_b"]
    assert json.loads(call["blocks"])[0]["signature"] == "EqQBCkYIBxgCKkD+/sig=="
    assert record_of(document, ids["results"])["answered_ids"] == ["toolu_a", "toolu_b"]
    (tool_set,) = document["tool_sets"]
    assert json.loads(tool_set["tools"])[0]["name"] == "read_file"
    offered = [c for c in document["calls"] if c["properties"].get("tools_sha256")]
    assert [c["properties"]["tools_sha256"] for c in offered] == [tool_set["sha256"]]
    before = await tool_state(ledger, session.id)
    assert len(before["renders"]) == 2  # the reply, and the answer of the first lookup

    await run_cypher(db, DELETE_SESSION, sid=session.id)
    text = json.dumps(document)
    assert await import_session(db, other_tenant, json.loads(text), Limits()) == session.id
    imported = Ledger.open(db, other_tenant, Limits())
    assert await imported.violations(session.id) == []
    again = await export_session(db, other_tenant, session.id, Limits())
    assert without_information(again) == without_information(document)
    assert await tool_state(imported, session.id) == before
    assert await run_cypher(db, TOOL_USE_TENANTS, sid=session.id) == [{"tenant": other_tenant}]
    # Each medium is stored once per tenant, however many nodes name it.
    expected = [{"sha256": h} for h in sorted([image.sha256, pdf.sha256])]
    assert await run_cypher(db, TENANT_MEDIA, tenant=other_tenant) == expected
    assert await run_cypher(db, TENANT_MEDIA, tenant=tenant) == expected
    (call,) = [c for c in await imported.calls.get_many([offered[0]["properties"]["id"]])]
    assert await imported.calls.tool_sets([call.tools_sha256]) == {
        tool_set["sha256"]: json.loads(tool_set["tools"])}


async def test_media_already_stored_for_the_tenant_need_not_be_in_the_document(
        ledger, compactor, db, tenant, other_tenant):
    """A version 1 document (before media were exported) imports where its media are stored."""
    session, ids = await agent_session(ledger, compactor)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)  # the tenant's media stay stored
    version_1 = {**copy.deepcopy(document), "version": 1}
    for node in version_1["nodes"]:  # no carry nodes then
        del node["carries_over"]
    del version_1["media"], version_1["tool_sets"], version_1["labels"], version_1["pins"]
    del version_1["branch_names"]
    # and calls offered no tools then:
    for call in version_1["calls"]:
        call["properties"].pop("tools_sha256", None)
    image = json.loads(record_of(document, ids["ask"])["blocks"])[1]["source"]["sha256"]
    with pytest.raises(BadInput) as missing:
        await import_session(db, other_tenant, version_1, Limits())
    assert image in missing.value.message and ids["ask"] in missing.value.message
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}
    assert await run_cypher(db, TENANT_MEDIA, tenant=other_tenant) == []
    with pytest.raises(BadInput, match="has unknown fields"):
        await import_session(db, tenant, {**version_1, "media": document["media"]}, Limits())

    assert await import_session(db, tenant, version_1, Limits()) == session.id
    expected = {**version_1, "version": VERSION, "media": document["media"], "labels": [],
                "branch_names": [], "pins": [],
                "nodes": [{**n, "carries_over": []} for n in version_1["nodes"]]}
    assert without_information(await export_session(db, tenant, session.id, Limits())) == \
        without_information(expected)
    assert len(await run_cypher(db, TENANT_MEDIA, tenant=tenant)) == 2
    await assert_sound(ledger, session.id)


def _answer_with_a_user_message(document, ids):
    """The results of the parallel tool uses become a user message: the uses stay open."""
    node = record_of(document, ids["results"])
    for key in ("blocks", "answered_ids"):
        del node[key]
    node.update(role="user", content="Never mind.", tokens=estimate_tokens("Never mind."))
    return ids["results"], f"tool pair: {ids['results']} (user) follows {ids['call']}"


def _answer_the_sibling(document, ids):
    """The answer to toolu_d moved under the first lookup, which opened toolu_c."""
    row = next(n for n in document["nodes"] if n["properties"]["id"] == ids["answered"])
    row["predecessor_id"] = ids["lookup"]
    return ids["answered"], (f"ANSWERS: {ids['answered']} answers (toolu_d) but its ANSWERS "
                             "edges reach () among the tool uses of its predecessor")


def _answer_an_earlier_message(document, ids):
    node = record_of(document, ids["answered"])
    node["blocks"] = node["blocks"].replace("toolu_d", "toolu_a")
    node["content"] = node["content"].replace("toolu_d", "toolu_a")
    node["answered_ids"] = ["toolu_a"]
    return ids["answered"], f"tool pair: {ids['answered']} (tool) follows {ids['retried']}"


BROKEN_PAIRS = {"open tool uses followed by a user message": _answer_with_a_user_message,
                "a result under a sibling of its tool use": _answer_the_sibling,
                "a result answering an earlier message": _answer_an_earlier_message}


@pytest.mark.parametrize("change", BROKEN_PAIRS.values(), ids=BROKEN_PAIRS.keys())
async def test_a_document_breaking_a_tool_pair_is_bad_input_and_writes_nothing(
        ledger, compactor, db, tenant, other_tenant, change):
    session, ids = await agent_session(ledger, compactor)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    broken = copy.deepcopy(document)
    node_id, says = change(broken, ids)
    with pytest.raises(BadInput) as caught:
        await import_session(db, other_tenant, broken, Limits())
    assert says in caught.value.message and node_id in caught.value.message, \
        caught.value.message
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}
    assert await run_cypher(db, TOOL_USE_TENANTS, sid=session.id) == []
    assert await run_cypher(db, TENANT_MEDIA, tenant=other_tenant) == []
    assert await import_session(db, other_tenant, document, Limits()) == session.id


def _medium(document, index=0):
    return document["media"][index]


def _other_data(document, ids):
    _medium(document)["data"] = base64.b64encode(b"\x89PNG something else").decode()
    return _medium(document)["sha256"], "data does not hash to its sha256"


def _wrong_bytes(document, ids):
    _medium(document)["bytes"] += 1
    return _medium(document)["sha256"], "bytes is"


def _loose_base64(document, ids):
    _medium(document)["data"] = _medium(document)["data"][:-4] + "\n" + \
        _medium(document)["data"][-4:]
    return _medium(document)["sha256"], "data is not base64"


def _unknown_type(document, ids):
    _medium(document)["media_type"] = "image/bmp"
    return _medium(document)["sha256"], "media_type must be one of"


def _twice(document, ids):
    document["media"].append(copy.deepcopy(_medium(document)))
    return _medium(document)["sha256"], "appears twice in the document"


def _named_by_no_node(document, ids):
    data = b"an unused medium"
    document["media"].append({"sha256": hashlib.sha256(data).hexdigest(),
                              "media_type": "text/plain",
                              "data": base64.b64encode(data).decode(), "bytes": len(data)})
    return document["media"][-1]["sha256"], "no node of the document names it"


def _missing(document, ids):
    ask = json.loads(record_of(document, ids["ask"])["blocks"])[1]["source"]["sha256"]
    document["media"] = [m for m in document["media"] if m["sha256"] != ask]
    return ask, f"node {ids['ask']} names media"


def _extra_field(document, ids):
    _medium(document)["width"] = 64
    return "media[0]", "has unknown fields"


BAD_MEDIA = {"data of another hash": _other_data, "wrong byte count": _wrong_bytes,
             "base64 with a newline": _loose_base64, "unknown media type": _unknown_type,
             "a medium twice": _twice, "a medium no node names": _named_by_no_node,
             "a medium neither carried nor stored": _missing, "an unknown field": _extra_field}


@pytest.mark.parametrize("change", BAD_MEDIA.values(), ids=BAD_MEDIA.keys())
async def test_a_document_with_bad_media_is_bad_input_and_writes_nothing(
        ledger, compactor, db, tenant, other_tenant, change):
    session, ids = await agent_session(ledger, compactor)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    broken = copy.deepcopy(document)
    named, says = change(broken, ids)
    with pytest.raises(BadInput) as caught:
        await import_session(db, other_tenant, broken, Limits())
    assert says in caught.value.message and named in caught.value.message, caught.value.message
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}
    assert await run_cypher(db, TENANT_MEDIA, tenant=other_tenant) == []


async def test_import_applies_the_importing_service_media_limit(
        ledger, compactor, db, tenant, other_tenant):
    session, ids = await agent_session(ledger, compactor)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    largest = max(m["bytes"] for m in document["media"])
    with pytest.raises(BadInput, match=f"is {largest} bytes; the limit is {largest - 1}"):
        await import_session(db, other_tenant, document, Limits(max_media_bytes=largest - 1))
    assert await _store_counts(db, session.id) == {"sessions": 0, "nodes": 0, "calls": 0}
    assert await import_session(db, other_tenant, document,
                                Limits(max_media_bytes=largest)) == session.id


async def test_a_session_whose_node_does_not_carry_its_media_is_not_exported(
        ledger, compactor, db, tenant):
    session, ids = await agent_session(ledger, compactor)
    await run_cypher(db, "MATCH (:Node {id: $again})-[c:CARRIES]->(:Media "
                         "{media_type: 'application/pdf'}) DELETE c", again=ids["again"])
    try:
        with pytest.raises(Conflict, match=f"node {ids['again']} names media [0-9a-f]{{64}} "
                                           f"but does not carry it .*ctxdag check"):
            await export_session(db, tenant, session.id, Limits())
        assert any(v.startswith(f"CARRIES: node {ids['again']}")
                   for v in await ledger.violations(session.id))
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)


def _tool(name: str, description: str, properties: dict):
    from service.turns.requests import Tool
    return Tool(name, description, {"type": "object", "properties": properties})


LOOKUP = _tool("lookup", "Looks a word up.", {"word": {"type": "string"}})
CLOCK = _tool("clock", "Tells the time.", {})


async def test_tool_set_versions_survive_export_and_import(ledger, turns, db, tenant,
                                                           other_tenant):
    """A session's tool sets (setTools), the session's and a branch's, come back as they
    were: the same versions, and the same set in force at every node."""
    from service.model.models import tools_json

    session = await ledger.sessions.create("tools", "sys")
    await ledger.tool_sets.set(session.id, tools_json([LOOKUP]), {"mode": "auto"})
    first = await turns.send_message(session.id, "Hello.")
    await ledger.tool_sets.set(session.id, tools_json([LOOKUP, CLOCK]), None,
                               anchor_id=first.reply.id)
    await turns.send_message(session.id, "And now?")
    await ledger.tool_sets.set(session.id, None)  # the session's set cleared
    history = (await ledger.tool_sets.histories([session.id]))[session.id]
    assert [v.version for v in history] == [1, 2, 3]
    document = await export_session(db, tenant, session.id, Limits())
    assert [v["properties"]["version"] for v in document["tool_set_versions"]] == [1, 2, 3]
    assert document["tool_set_versions"][1]["properties"]["anchor_id"] == first.reply.id
    assert len(document["tool_sets"]) == 2
    heads = [first.user_node.id, first.reply.id, (await ledger.sessions.get(session.id)).head_id]
    in_force = [await ledger.tool_sets.in_force(session.id, h) for h in heads]

    await run_cypher(db, DELETE_SESSION, sid=session.id)
    assert await import_session(db, other_tenant, json.loads(json.dumps(document)),
                                Limits()) == session.id
    imported = Ledger.open(db, other_tenant, Limits())
    again = (await imported.tool_sets.histories([session.id]))[session.id]
    assert again == history
    assert [await imported.tool_sets.in_force(session.id, h) for h in heads] == in_force
    assert without_information(await export_session(db, other_tenant, session.id, Limits())) \
        == without_information(document)
    await assert_sound(imported, session.id)


@pytest.mark.parametrize("bad, message", [
    (lambda d: d["tool_set_versions"][0]["properties"].update(version=2), "version must be 1"),
    (lambda d: d["tool_set_versions"][0]["properties"].update(anchor_id="nod_nowhere"),
     "is not a turn of the document"),
    (lambda d: d.update(tool_sets=[]), "is not among the document's tool_sets"),
    (lambda d: d["tool_set_versions"][0]["properties"].update(tool_choice="[1]"),
     "tool_choice must be a JSON object"),
    (lambda d: d["tool_set_versions"][0]["properties"].update(colour="red"),
     "unknown properties"),
    (lambda d: d.update(version=4), "unknown fields"),
])
async def test_a_document_with_bad_tool_set_versions_is_bad_input_and_writes_nothing(
        ledger, db, tenant, other_tenant, bad, message):
    from service.model.models import tools_json

    session = await ledger.sessions.create("tools", "sys")
    await ledger.tool_sets.set(session.id, tools_json([LOOKUP]), {"mode": "auto"})
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    bad(document)
    with pytest.raises(BadInput, match=message):
        await import_session(db, other_tenant, document, Limits())
    left = await run_cypher(db, "MATCH (x {session_id: $sid}) RETURN count(x) AS n",
                            sid=session.id)
    assert left == [{"n": 0}]


async def test_a_session_exported_a_page_at_a_time_is_the_document_exported_at_once(
        ledger, compactor, turns, db, tenant, monkeypatch):
    """A long session's nodes, calls and media are read a page of each at a time (one
    Neo4j result holds no more than a page); read so, a page of one, two or three, each
    session's document is the one read at once, and each further page is a round trip."""
    rich, _ = await build_rich_session(ledger, compactor, turns)
    agent, _ = await agent_session(ledger, compactor)
    for session in (rich, agent):
        await turns.send_message(session.id, "One more question?")
        whole = without_information(await export_session(db, tenant, session.id, Limits()))
        sizes = {"node": len(whole["nodes"]), "call": len(whole["calls"]),
                 "media": len(whole["media"])}
        assert sizes["node"] > 10 and sizes["call"] > 2
        for page in (1, 2, 3):
            monkeypatch.setattr(backup, "EXPORT_PAGES", dict.fromkeys(sizes, page))
            db.round_trips.by_name.clear()
            paged = await export_session(db, tenant, session.id, Limits())
            assert without_information(paged) == whole, page
            more = {f"backup_export_{key}": -(-sizes[kind] // page) - 1
                    for kind, key in (("node", "nodes"), ("call", "calls"), ("media", "media"))}
            assert db.round_trips.by_name == {"backup_export": 1, **{
                name: count for name, count in more.items() if count > 0}}
    assert len(whole["media"]) == 2  # the agent's image and PDF


async def test_a_long_session_written_to_while_it_is_exported_is_read_again(
        ledger, turns, db, tenant, monkeypatch):
    """A session that gains a node between the pages of its export is read again from its
    first page, so the document is the session at one moment; one written to at every read
    is refused after EXPORT_ATTEMPTS reads, with a message that says to export it again."""
    session = await ledger.sessions.create("busy", "sys")
    await chat(ledger, session, *texts(4))
    monkeypatch.setattr(backup, "EXPORT_PAGES", {"node": 2, "call": 2, "media": 2})
    read, written = db.read, []

    async def busy(name, /, **params):
        if name == "backup_export_nodes" and len(written) < writes:
            written.append((await ledger.head.append_message(
                session.id, "user", f"more {len(written)}")).node.id)
        return await read(name, **params)

    monkeypatch.setattr(db, "read", busy)
    writes = 1
    db.round_trips.by_name.clear()
    document = await export_session(db, tenant, session.id, Limits())
    assert db.round_trips.by_name["backup_export"] == 2
    assert document["nodes"][-1]["properties"]["id"] == written[-1]
    monkeypatch.setattr(db, "read", read)
    assert without_information(document) == without_information(
        await export_session(db, tenant, session.id, Limits()))

    monkeypatch.setattr(db, "read", busy)
    writes = 10
    with pytest.raises(Conflict, match="written to while it was exported, 3 times"):
        await export_session(db, tenant, session.id, Limits())
