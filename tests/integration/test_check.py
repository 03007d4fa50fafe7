"""The whole-store invariant check: silent on sound sessions, names the broken ones."""

import base64
import json

import pytest

from service.errors import Conflict, NotFound
from service.model import blocks
from service.store import Limits, backup, invariants
from service.store.backup import export_session
from service.store.db import Database
from service.tokens import estimate_tokens
from tests.integration.helpers import (
    DELETE_SESSION, KEEP_FOUR, agent_session, broken_sessions, chat, run_command, run_cypher,
    runtime_for, turns as texts, two_compactions,
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

LOST_EVENT = """
MATCH (e:Event {session_id: $sid, seq: 2})
DELETE e
"""

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

    lost = await ledger.sessions.create("lost event")
    await chat(ledger, lost, "Q. ".ljust(20, "x"))
    corrupted.append(lost.id)
    await run_cypher(db, LOST_EVENT, sid=lost.id)

    found = await broken_sessions(db, Limits(), tenant)
    assert set(found) == {two_heads.id, cycle.id, foreign.id, gap.id, lost.id}
    assert found[lost.id] == ["events: 1 kept, 1 of them numbered 1 to 2 once each; "
                              "expected 2"]
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
    assert {two_heads.id, cycle.id, foreign.id, gap.id, lost.id} <= set(everywhere)
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
    assert capsys.readouterr().out == "ok: 1 session checked\n"

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


# --- summaries: the storage of the summary strategies (docs/concepts/strategies.md) ------

SUMMARY_EDGES = """
MATCH (x:Node {id: $summary_id})
RETURN x.covers_new_count AS covers_new_count, x.retained_ids AS retained_ids,
  x.compacted_head_id AS compacted_head_id, x.replaced_id AS replaced_id,
  COLLECT { MATCH (x)-[c:COVERS]->(t:Node) RETURN t.id ORDER BY c.order } AS covers,
  [(x)-[:ABSORBED]->(a:Node) | a.id] AS absorbed, [(x)-[:REPLACED]->(r:Node) | r.id] AS replaced
"""

RENUMBER_COVERS = """
MATCH (x:Node {id: $s2})-[c:COVERS]->()
SET c.order = c.order - 1
"""

# Each corruption of a sound session with two compactions (s2 absorbed and replaced s1),
# and the violations check names for it ({s1}, {s2}, {t0} are filled in).
SUMMARY_CORRUPTIONS = {
    "ABSORBED missing": (
        ["MATCH (:Node {id: $s2})-[r:ABSORBED]->() DELETE r"],
        ["ABSORBED: {s2} has 0 ABSORBED relationships for absorbed_id {s1}, "
         "not one to that node"]),
    "ABSORBED to another node": (
        ["MATCH (x:Node {id: $s2})-[r:ABSORBED]->() DELETE r "
         "WITH x MATCH (t:Node {id: $t0}) CREATE (x)-[:ABSORBED]->(t)"],
        ["ABSORBED: {s2} has 1 ABSORBED relationships for absorbed_id {s1}, "
         "not one to that node"]),
    "ABSORBED without absorbed_id": (
        ["MATCH (x:Node {id: $s1}), (t:Node {id: $t0}) CREATE (x)-[:ABSORBED]->(t)"],
        ["ABSORBED: {s1} has 1 ABSORBED relationships for absorbed_id none, "
         "not one to that node"]),
    "ENDS_AT missing": (
        ["MATCH (:Node {id: $s2})-[r:ENDS_AT]->() DELETE r"],
        ["ENDS_AT: {s2} has 0 ENDS_AT relationships for covers_last_id {last}, "
         "not one to that node"]),
    "ENDS_AT to another node": (
        ["MATCH (x:Node {id: $s2})-[r:ENDS_AT]->() DELETE r "
         "WITH x MATCH (t:Node {id: $t0}) CREATE (x)-[:ENDS_AT]->(t)"],
        ["ENDS_AT: {s2} has 1 ENDS_AT relationships for covers_last_id {last}, "
         "not one to that node"]),
    "REPLACED missing": (
        ["MATCH (:Node {id: $s2})-[r:REPLACED]->() DELETE r"],
        ["REPLACED: {s2} has 0 REPLACED relationships for replaced_id {s1}, "
         "not one to that node"]),
    "replaced a later summary": (
        ["MATCH (x:Node {id: $s1}), (y:Node {id: $s2}) "
         "SET x.replaced_id = y.id CREATE (x)-[:REPLACED]->(y)"],
        ["REPLACED: {s1} replaced {s2}, which is not an earlier summary of this session"]),
    "covers_new_count too high": (
        ["MATCH (x:Node {id: $s2}) SET x.covers_new_count = x.covers_new_count + 1"],
        ["COVERS: summary {s2} has 4 COVERS edges for a covers_new_count of 5, "
         "or their orders are not 0..n-1"]),
    "COVERS still naming the absorbed segment": (
        ["MATCH (x:Node {id: $s2}), (y:Node {id: $s1})-[c:COVERS]->(t:Node) "
         "CREATE (x)-[:COVERS {order: c.order + 4}]->(t)"],
        ["COVERS: summary {s2} has 8 COVERS edges for a covers_new_count of 4, "
         "or their orders are not 0..n-1"]),
    "COVERS not continuing the absorbed segment": (
        ["MATCH (x:Node {id: $s2})-[c:COVERS {order: 0}]->() DELETE c "
         "SET x.covers_new_count = 3, x.covers_count = 7", RENUMBER_COVERS],
        ["COVERS: summary {s2} does not cover a contiguous chain segment of real turns "
         "continuing the segment of summary {s1} it absorbed, or its covers_count, "
         "covers_first_id or covers_last_id do not describe it"]),
    "covers_count not adding up": (
        ["MATCH (x:Node {id: $s2}) SET x.covers_count = 4"],
        ["COVERS: summary {s2} does not cover a contiguous chain segment of real turns "
         "continuing the segment of summary {s1} it absorbed, or its covers_count, "
         "covers_first_id or covers_last_id do not describe it"]),
    "covers_first_id of the new turns only": (
        ["MATCH (x:Node {id: $s2})-[:COVERS {order: 0}]->(t) SET x.covers_first_id = t.id"],
        ["COVERS: summary {s2} does not cover a contiguous chain segment of real turns "
         "continuing the segment of summary {s1} it absorbed, or its covers_count, "
         "covers_first_id or covers_last_id do not describe it"]),
    "retained_ids missing their first": (
        ["MATCH (x:Node {id: $s2}) SET x.retained_ids = tail(x.retained_ids)"],
        ["summary: {s2} has retained_ids that are not the chain right below its "
         "covers_last_id down to its compacted_head_id"]),
    "retained_ids out of order": (
        ["MATCH (x:Node {id: $s2}) "
         "SET x.retained_ids = [i IN range(size(x.retained_ids) - 1, 0, -1) | x.retained_ids[i]]"],
        ["summary: {s2} has retained_ids that are not the chain right below its "
         "covers_last_id down to its compacted_head_id"]),
    "retained_ids empty above the compacted head": (
        ["MATCH (x:Node {id: $s2}) SET x.retained_ids = []"],
        ["summary: {s2} has retained_ids that are not the chain right below its "
         "covers_last_id down to its compacted_head_id"]),
    "compacted_head_id not the last retained": (
        ["MATCH (x:Node {id: $s2}) SET x.compacted_head_id = x.covers_last_id"],
        ["summary: {s2} has retained_ids that are not the chain right below its "
         "covers_last_id down to its compacted_head_id"]),
    "active but deleted": (
        ["MATCH (x:Node {id: $s2}) SET x.deleted_at = datetime()"],
        ["summary: active {s2} is deleted"]),
    "retired but active": (
        ["MATCH (x:Node {id: $s2}) SET x.retired_at = datetime()"],
        ["summary: {s2} is retired but still active or not superseded"]),
    "retired but not superseded": (
        ["MATCH (x:Node {id: $s1}) SET x.retired_at = datetime(), x.superseded_summary = false"],
        ["summary: {s1} is neither active nor superseded",
         "summary: {s1} is retired but still active or not superseded"]),
}


async def test_summaries_are_stored_in_the_new_shape_and_check_is_clean(
        ledger, compactor, db, corrupted):
    session, t, s1, s2 = await two_compactions(ledger, compactor)
    rows = {sid: (await run_cypher_rows(db, SUMMARY_EDGES, summary_id=sid))[0]
            for sid in (s1, s2)}
    assert rows[s1] == {"covers_new_count": 4, "covers": [n.id for n in t[:4]],
                        "retained_ids": [n.id for n in t[4:8]], "compacted_head_id": t[7].id,
                        "replaced_id": None, "absorbed": [], "replaced": []}
    assert rows[s2] == {"covers_new_count": 4, "covers": [n.id for n in t[4:8]],
                        "retained_ids": [n.id for n in t[8:]], "compacted_head_id": t[11].id,
                        "replaced_id": s1, "absorbed": [s1], "replaced": [s1]}
    assert await ledger.violations(session.id) == []

    corrupted.append(session.id)
    # A retired summary that is superseded and not active is sound, and so is a summary
    # without retained_ids and compacted_head_id (written before they were recorded).
    await run_cypher(db, "MATCH (x:Node {id: $s1}) SET x.retired_at = datetime() "
                         "REMOVE x.retained_ids, x.compacted_head_id", s1=s1)
    assert await ledger.violations(session.id) == []
    # A summary compacted from the last turn of its segment retains nothing.
    await run_cypher(db, "MATCH (x:Node {id: $s2}) "
                         "SET x.retained_ids = $none, x.compacted_head_id = x.covers_last_id",
                     s2=s2, none=[])
    assert (await run_cypher_rows(db, SUMMARY_EDGES, summary_id=s2))[0]["retained_ids"] == []
    assert await ledger.violations(session.id) == []


@pytest.mark.parametrize("corruption", SUMMARY_CORRUPTIONS.values(),
                         ids=SUMMARY_CORRUPTIONS.keys())
async def test_check_names_each_broken_summary_invariant(
        ledger, compactor, db, tenant, corrupted, corruption):
    statements, says = corruption
    session, t, s1, s2 = await two_compactions(ledger, compactor)
    assert await ledger.violations(session.id) == []
    corrupted.append(session.id)
    for statement in statements:
        await run_cypher(db, statement, **{k: v for k, v in
                                           {"s1": s1, "s2": s2, "t0": t[0].id}.items()
                                           if f"${k}" in statement})
    last = (await ledger.summaries.get(s2)).covers_ids[-1]
    expected = [line.format(s1=s1, s2=s2, t0=t[0].id, last=last) for line in says]
    assert await ledger.violations(session.id) == expected
    assert await broken_sessions(db, Limits(), tenant) == {session.id: expected}


async def run_cypher_rows(db, text, **params):
    records, _, _ = await db.driver.execute_query(text, params)
    return [r.data() for r in records]


# --- content blocks: tool pairs and media (docs/concepts/content-blocks.md) -------

INTRUDER = """
MATCH (s:Session {id: $sid}), (p:Node {id: $call})
CREATE (:Node {id: $intruder, session_id: s.id, tenant: s.tenant, role: 'user',
               content: 'Hello?', tokens: $tokens, metadata: '{}', created_at: datetime(),
               seq: s.next_seq, depth: p.depth + 1, side_branch: false})-[:PREDECESSOR]->(p)
SET s.next_seq = s.next_seq + 1
"""

A_NEW_TOOL_USE_ID = """
MATCH (:Node {id: $call})-[:USES]->(t:ToolUse {id: 'toolu_b'})
SET t.id = 'toolu_z'
"""

# Each corruption of `agent_session` and the lines check names it by ({call} and the other
# names of agent_session's nodes are filled in, {image} with the image's hash, {estimate}
# with the call's token estimate, {pretty} with its blocks indented). {intruder} is a user
# node the first corruption adds.
AGENT_CORRUPTIONS = {
    "a user message after open tool uses": (
        [INTRUDER],
        ["tool pair: {intruder} (user) follows {call}, whose tool uses (toolu_a, toolu_b) "
         "only a tool message answering every one of them may follow"]),
    "an ANSWERS edge removed": (
        ["MATCH (:Node {id: $results})-[a:ANSWERS]->(:ToolUse {id: 'toolu_b'}) DELETE a"],
        ["ANSWERS: {results} answers (toolu_a, toolu_b) but its ANSWERS edges reach (toolu_a) "
         "among the tool uses of its predecessor"]),
    "an ANSWERS edge to a tool use of another node": (
        ["MATCH (n:Node {id: $answered})-[a:ANSWERS]->() DELETE a WITH n "
         "MATCH (:Node {id: $call})-[:USES]->(t:ToolUse {id: 'toolu_a'}) "
         "CREATE (n)-[:ANSWERS {is_error: false}]->(t)"],
        ["ANSWERS: {answered} answers (toolu_d) but its ANSWERS edges reach () among the tool "
         "uses of its predecessor, and 1 other tool uses"]),
    "a ToolUse with the wrong id": (
        [A_NEW_TOOL_USE_ID],
        ["USES: {call} has USES edges to (toolu_a, toolu_z) for its tool_use_ids "
         "(toolu_a, toolu_b)",
         "ANSWERS: {results} answers (toolu_a, toolu_b) but its ANSWERS edges reach "
         "(toolu_a, toolu_z) among the tool uses of its predecessor"]),
    "a ToolUse no message uses": (
        ["MATCH (s:Session {id: $sid}) CREATE (:ToolUse {tenant: s.tenant, session_id: s.id, "
         "id: 'toolu_stray', name: 'read_file'})"],
        ["USES: tool use toolu_stray is used by 0 messages of this session"]),
    "blocks not in the ledger's form": (
        ["MATCH (n:Node {id: $call}) SET n.blocks = $pretty"],
        ["property: node {call}: blocks are not in the form the ledger writes them "
         "(compact JSON, keys sorted)"]),
    "content not the text of the blocks": (
        ["MATCH (n:Node {id: $call}) SET n.content = 'Reading both.'"],
        ["property: node {call}: content is not the text of the node's blocks"]),
    "tool_use_ids not those of the blocks": (
        ["MATCH (n:Node {id: $call}) SET n.tool_use_ids = ['toolu_b', 'toolu_a']"],
        ["USES: {call} has USES edges to (toolu_a, toolu_b) for its tool_use_ids "
         "(toolu_b, toolu_a)",
         "property: node {call}: tool_use_ids ['toolu_b', 'toolu_a'] are not the ids of the "
         "node's tool_use blocks"]),
    "answered_ids missing": (
        ["MATCH (n:Node {id: $results}) REMOVE n.answered_ids"],
        ["ANSWERS: {results} answers () but its ANSWERS edges reach (toolu_a, toolu_b) "
         "among the tool uses of its predecessor",
         "tool pair: {results} (tool) follows {call}, whose tool uses (toolu_a, toolu_b) only a "
         "tool message answering every one of them may follow",
         "property: node {results}: answered_ids is missing: the node's blocks name toolu_a, "
         "toolu_b"]),
    "tokens not the estimate of the blocks": (
        ["MATCH (n:Node {id: $call}) SET n.tokens = 1"],
        ["property: node {call}: tokens is 1, not the estimate of its blocks ({estimate})"]),
    "a ToolUse named otherwise": (
        ["MATCH (:Node {id: $call})-[:USES]->(t:ToolUse {id: 'toolu_b'}) SET t.name = 'grep'"],
        ["USES: node {call}: tool use toolu_b is named 'grep', not 'read_file' as in its "
         "blocks"]),
    "an error result's ANSWERS edge not an error": (
        ["MATCH (:Node {id: $results})-[a:ANSWERS]->(:ToolUse {id: 'toolu_b'}) "
         "SET a.is_error = false"],
        ["ANSWERS: node {results}: its ANSWERS edge to toolu_b has is_error False, not its "
         "tool_result's True"]),
    "a CARRIES edge removed": (
        ["MATCH (:Node {id: $ask})-[c:CARRIES]->() DELETE c"],
        ["CARRIES: node {ask} carries media () where its blocks name ({image})"]),
    "a stored medium's data changed": (
        ["MATCH (:Node {id: $ask})-[:CARRIES]->(m:Media) SET m.data = $other"],
        ["property: media {image}: data does not hash to its sha256"]),
}


@pytest.mark.parametrize("corruption", AGENT_CORRUPTIONS.values(),
                         ids=AGENT_CORRUPTIONS.keys())
async def test_check_names_each_broken_tool_pair_and_block_invariant(
        ledger, compactor, db, tenant, corrupted, corruption, capsys):
    statements, says = corruption
    session, ids = await agent_session(ledger, compactor)
    assert await ledger.violations(session.id) == []
    corrupted.append(session.id)
    call = await ledger.nodes.get(ids["call"])
    ask = await ledger.nodes.get(ids["ask"])
    values = {**ids, "sid": session.id, "intruder": f"nod_intruder_{session.id}",
              "tokens": estimate_tokens("Hello?"), "image": ask.blocks[1].source.sha256,
              "estimate": blocks.estimate(call.blocks),
              "pretty": json.dumps(json.loads(call.blocks_json), indent=1),
              "other": base64.b64encode(b"other data").decode()}
    for statement in statements:
        await run_cypher(db, statement, **{k: v for k, v in values.items()
                                           if f"${k}" in statement})
    expected = [line.format(**values) for line in says]
    assert await ledger.violations(session.id) == expected
    assert await admin(db, tenant, "check", session.id) == 1
    assert capsys.readouterr().out == "".join(f"{session.id}: {line}\n" for line in expected)


async def test_a_session_checked_a_page_of_nodes_at_a_time_is_named_as_in_one(
        ledger, compactor, db, tenant, corrupted, monkeypatch):
    """Every corruption above at once, on each of the two sessions they apply to: checked a
    page of one, two or three nodes at a time, each session's violations are the ones a
    single page names, in the same order, and each page is one more round trip."""
    summarized, t, s1, s2 = await two_compactions(ledger, compactor)
    agent, ids = await agent_session(ledger, compactor)
    corrupted.extend([summarized.id, agent.id])
    ask = await ledger.nodes.get(ids["ask"])
    call = await ledger.nodes.get(ids["call"])
    values = {**ids, "sid": agent.id, "intruder": f"nod_intruder_{agent.id}",
              "tokens": estimate_tokens("Hello?"), "image": ask.blocks[1].source.sha256,
              "pretty": json.dumps(json.loads(call.blocks_json), indent=1),
              "other": base64.b64encode(b"other data").decode(),
              "s1": s1, "s2": s2, "t0": t[0].id}
    for session_id, corruptions in ((summarized.id, SUMMARY_CORRUPTIONS),
                                    (agent.id, AGENT_CORRUPTIONS)):
        for statements, _ in corruptions.values():
            for statement in statements:
                await run_cypher(db, statement, **{
                    key: value for key, value in {**values, "sid": session_id}.items()
                    if f"${key}" in statement})
    # A broken medium two nodes carry, read in two pages: named once.
    await run_cypher(db, "MATCH (s:Session {id: $sid}) "
                         "MATCH (m:Media {sha256: $image, tenant: s.tenant}), "
                         "(a:Node {id: $ask}), (c:Node {id: $call}) "
                         "MERGE (a)-[:CARRIES]->(m) MERGE (c)-[:CARRIES]->(m) "
                         "SET m.data = $other", sid=agent.id, image=values["image"],
                     ask=ids["ask"], call=ids["call"], other=values["other"])
    whole = {session_id: await ledger.violations(session_id)
             for session_id in (summarized.id, agent.id)}
    assert all(len(found) > 5 for found in whole.values())
    assert sum(line.startswith("property: media") for line in whole[agent.id]) == 1
    for page in (1, 2, 3):
        monkeypatch.setattr(invariants, "PAGE_NODES", page)
        for session_id, found in whole.items():
            nodes = (await ledger.sessions.get(session_id)).node_count
            db.round_trips.by_name.clear()
            assert await ledger.violations(session_id) == found, page
            assert db.round_trips.by_name == {
                "check_session": 1, "check_session_nodes": -(-nodes // page) - 1}


async def test_a_node_on_no_page_is_counted_and_its_session_not_exported(
        ledger, db, tenant, corrupted, monkeypatch):
    """The check and the export read nodes a page at a time in seq order: a node whose seq
    is no number (a hand edit) is on no page. The check names how many there are, however
    the pages fall; the export refuses the session rather than leave them out."""
    session = await ledger.sessions.create("edited", "sys")
    nodes = await chat(ledger, session, *texts(6))
    corrupted.append(session.id)
    await run_cypher(db, "MATCH (a:Node {id: $a}), (b:Node {id: $b}) "
                         "SET a.seq = 'three' REMOVE b.seq", a=nodes[2].id, b=nodes[4].id)
    says = "seq: 2 of the session's 7 nodes have no numeric seq, so no page of its nodes " \
           "holds them: they were not checked further"
    for page in (1, 2, 5, invariants.PAGE_NODES):
        monkeypatch.setattr(invariants, "PAGE_NODES", page)
        assert says in await ledger.violations(session.id), page
    for page in (1, 5_000):
        monkeypatch.setattr(backup, "EXPORT_PAGES", {"node": page, "call": page, "media": page})
        with pytest.raises(Conflict, match=f"session {session.id} cannot be exported as it is "
                           "stored: 2 of its 7 nodes have no numeric seq"):
            await export_session(db, tenant, session.id, Limits())


async def test_a_session_written_to_while_checked_is_checked_again(
        ledger, db, tenant, monkeypatch):
    """A node appended between two pages of the check would be counted against a session
    read before it: the check begins again, and after CHECK_ATTEMPTS such writes says to
    check once the session is quiet."""
    session = await ledger.sessions.create("busy", "sys")
    await chat(ledger, session, *texts(6))
    monkeypatch.setattr(invariants, "PAGE_NODES", 2)
    read, writes = Database.read, []

    async def written_between(self, name, /, **params):
        if name == "check_session_nodes" and len(writes) < budget:
            role = ("user", "assistant")[len(writes) % 2]
            writes.append(await ledger.head.append_message(session.id, role, "more"))
        return await read(self, name, **params)

    monkeypatch.setattr(Database, "read", written_between)
    budget = 2
    db.round_trips.by_name.clear()
    assert await ledger.violations(session.id) == []
    assert db.round_trips.by_name["check_session"] == 3 and len(writes) == 2
    budget = 2 + invariants.CHECK_ATTEMPTS
    with pytest.raises(Conflict, match=f"session {session.id} was written to while it was "
                       "checked, 3 times; check it again once it is quiet"):
        await ledger.violations(session.id)
    monkeypatch.setattr(Database, "read", read)
    assert await ledger.violations(session.id) == []


async def test_a_node_without_an_id_is_named_however_the_pages_fall(
        ledger, db, tenant, corrupted, monkeypatch):
    """A page is read on from the last node's (seq, id): one without an id ends a page as
    well as any (a hand edit), and is named, not a crash."""
    session = await ledger.sessions.create("edited", "sys")
    nodes = await chat(ledger, session, *texts(4))
    corrupted.append(session.id)
    await run_cypher(db, "MATCH (a:Node {id: $a}) REMOVE a.id", a=nodes[1].id)
    whole = await ledger.violations(session.id)
    assert any("id" in line for line in whole) and len(whole) >= 1
    for page in (1, 2):
        monkeypatch.setattr(invariants, "PAGE_NODES", page)
        assert await ledger.violations(session.id) == whole, page
