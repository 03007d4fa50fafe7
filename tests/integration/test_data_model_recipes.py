"""docs/data-model.md holds: every Cypher recipe in it runs on a real session and returns
what the service itself says, and every label, relationship type and property the
session stores is named there."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from service.store import Ledger, Role, Summary
from service.store.calls import diff_reads
from tests.integration.helpers import (
    KEEP_FOUR, assert_sound, run_cypher, session_calls, turns as texts,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "data-model.md"
RECIPE = re.compile(r"<!-- recipe: (\w+) -->\n```cypher\n(.*?)```", re.S)
PARAMETER = re.compile(r"\$(\w+)")
TABLE_ROW = re.compile(r"^\| `(\w+)` \|", re.M)

RECIPE_PARAMETERS = {
    "call_reads": {"tenant", "call_id"},
    "calls_reading_node": {"tenant", "node_id"},
    "summaries_covering_node": {"tenant", "node_id"},
    "reads_diff": {"tenant", "first_call_id", "second_call_id"},
    "calls_reading_deleted_nodes": {"tenant", "session_id"},
    "head_chain": {"tenant", "session_id"},
    "prompt_at_head_rolling": {"tenant", "session_id", "head_id"},
    "summary_segment": {"tenant", "summary_id"},
    "tool_calls": {"tenant", "session_id"},
}


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def recipes() -> dict[str, str]:
    return dict(RECIPE.findall(doc_text()))


async def run_recipe(ledger: Ledger, name: str, **params) -> list[dict]:
    return await run_cypher(ledger.db, recipes()[name], tenant=ledger.tenant, **params)


def column(rows: list[dict], *keys: str) -> list:
    return [row[keys[0]] if len(keys) == 1 else tuple(row[k] for k in keys) for row in rows]


@dataclass
class Scenario:
    session_id: str
    root_id: str
    summaries: list[Summary]
    deleted_ids: tuple[str, ...]
    node_ids: list[str] = field(default_factory=list)

    def record(self, *results) -> None:
        for result in results:
            self.node_ids += [n.id for n in (result.user_node, result.reply) if n is not None]


async def compact(compactor, session_id: str, **options) -> Summary:
    result = await compactor.compact(session_id, keep_recent_tokens=KEEP_FOUR, **options)
    assert result.summary is not None, result.message
    return result.summary


@pytest.fixture
async def scenario(ledger, turns, compactor) -> Scenario:
    """Turns and a compaction (s1); a retry and a task spawned off it; more turns and a
    compaction with instructions (s2, absorbing s1); an edit, then back on the original
    branch more turns, a compaction there (s3, absorbing s2) and a turn reading s3, then
    that branch deleted, s3 with it (no summary is active then, s2 does not come back); a
    compaction of what is left (s4), a turn, and a compaction absorbing s4 (s5) that is
    undone, which makes s4 active again; a last turn, and an external call reading that
    turn's prompt backwards."""
    session = await ledger.sessions.create("data model", "You are terse.")
    questions = iter(q for i, q in enumerate(texts(60)) if i % 2 == 0)

    async def ask():
        return await turns.send_message(session.id, next(questions))

    early = [await ask() for _ in range(4)]
    s1 = await compact(compactor, session.id)
    asked = await ask()
    retried = await turns.retry(asked.reply.id)
    task = await turns.spawn_task(session.id, retried.reply.id, "Look into this aside.")
    later = [await ask() for _ in range(3)]
    s2 = await compact(compactor, session.id, instructions="Keep every question.")
    edited = await turns.edit(later[-1].user_node.id, "Question, asked another way.")
    await ledger.head.set_head(session.id, later[-1].reply.id)
    doomed = [await ask() for _ in range(2)]
    s3 = await compact(compactor, session.id)
    doomed.append(await ask())
    deleted = await ledger.head.delete_branch(session.id, doomed[-1].reply.id)
    assert s3.id in deleted.deleted_ids
    assert (await ledger.sessions.get(session.id)).active_summary_id is None
    s4 = await compact(compactor, session.id)
    between = await ask()
    s5 = await compact(compactor, session.id)
    assert s5.absorbed_id == s4.id
    assert (await ledger.summaries.retire(s5.id)).restored_id == s4.id
    last = await ask()
    chat = await ledger.calls.get(last.call_id)
    await turns.record_call(session.id, list(reversed(chat.read_ids)), "external-model")

    summaries = await ledger.summaries.get_many([s1.id, s2.id, s3.id, s4.id, s5.id])
    built = Scenario(session.id, session.root_id, summaries, deleted.deleted_ids,
                     [session.root_id] + [s.id for s in summaries])
    built.record(*early, asked, retried, task, *later, edited, *doomed, between, last)
    await assert_sound(ledger, session.id)
    return built


async def call_ids(ledger: Ledger, session_id: str) -> list[str]:
    return [c.id for c in await session_calls(ledger, session_id)]


async def chain_ids(ledger: Ledger, node_id: str) -> list[str]:
    """The node's chain from ROOT down to it."""
    chain = []
    while node_id is not None:
        chain.append(node_id)
        node_id = (await ledger.nodes.get(node_id)).predecessor_id
    return chain[::-1]


async def deleted_branch(ledger: Ledger, node_id: str) -> tuple[str, list[str]]:
    """The live node a deleted node hangs from, and the deleted nodes from there to it."""
    nodes = await ledger.nodes.get_many(await chain_ids(ledger, node_id))
    live = max(i for i, n in enumerate(nodes) if not n.deleted)
    return nodes[live].id, [n.id for n in nodes[live + 1:]]


def test_every_recipe_is_named_marked_and_parameterized():
    found = recipes()
    assert set(found) == set(RECIPE_PARAMETERS)
    assert doc_text().count("```cypher") == len(found)
    for name, query in found.items():
        assert set(PARAMETER.findall(query)) == RECIPE_PARAMETERS[name], name


async def test_call_reads_is_each_calls_prompt_in_order(ledger, scenario):
    for call_id in await call_ids(ledger, scenario.session_id):
        rows = await run_recipe(ledger, "call_reads", call_id=call_id)
        expected = [(n.id, n.role.value, n.content, n.deleted)
                    for n in await ledger.calls.reads(call_id)]
        assert column(rows, "node_id", "role", "content", "deleted") == expected
        assert column(rows, "position") == list(range(len(expected)))


async def test_calls_reading_node_lists_readers_newest_first_with_positions(ledger, scenario):
    positions = set()
    for node_id in scenario.node_ids:
        rows = await run_recipe(ledger, "calls_reading_node", node_id=node_id)
        expected = [(r.call.id, r.call.purpose.value, r.position)
                    for r in await ledger.calls.reading(node_id)]
        assert column(rows, "call_id", "purpose", "position") == expected
        positions |= {position for _, _, position in expected}
    assert len(positions) > 5


async def assert_covering_as_the_service_says(ledger: Ledger, session_id: str,
                                              node_ids: list[str], summary_ids: list[str]):
    active_id = (await ledger.sessions.get(session_id)).active_summary_id
    summaries = await ledger.summaries.get_many(summary_ids)
    newest_first = sorted(summaries, key=lambda s: s.node.seq, reverse=True)
    for node_id in node_ids:
        rows = await run_recipe(ledger, "summaries_covering_node", node_id=node_id)
        expected = [(s.id, s.id == active_id, s.superseded, s.retired, s.node.deleted)
                    for s in newest_first if node_id in s.covers_ids]
        assert column(rows, "summary_id", "active", "superseded", "retired", "deleted") == (
            expected), node_id


async def test_summaries_covering_node_and_the_active_one(ledger, scenario):
    summary_ids = [s.id for s in scenario.summaries]
    await assert_covering_as_the_service_says(ledger, scenario.session_id, scenario.node_ids,
                                              summary_ids)
    assert (await ledger.sessions.get(scenario.session_id)).active_summary_id == summary_ids[3]
    first_turn = scenario.summaries[0].covers_ids[0]
    covering = await run_recipe(ledger, "summaries_covering_node", node_id=first_turn)
    assert column(covering, "summary_id") == summary_ids[::-1]


async def test_a_deleted_summary_is_never_active(ledger, turns, compactor):
    session = await ledger.sessions.create("deleted summary", "sys")
    asked = [await turns.send_message(session.id, q) for q in texts(8)[::2]]
    await turns.edit(asked[1].user_node.id, "Question, asked another way.")
    await ledger.head.set_head(session.id, asked[-1].reply.id)
    summary = await compact(compactor, session.id)
    deleted = await ledger.head.delete_branch(session.id, asked[-1].reply.id)
    assert summary.id in deleted.deleted_ids
    assert (await ledger.sessions.get(session.id)).active_summary_id is None
    await assert_covering_as_the_service_says(ledger, session.id, list(summary.covers_ids),
                                              [summary.id])
    (row,) = await run_recipe(ledger, "summaries_covering_node",
                              node_id=summary.covers_ids[0])
    assert (row["summary_id"], row["active"], row["deleted"]) == (summary.id, False, True)


async def test_reads_diff_matches_the_services_diff(ledger, scenario):
    calls = await ledger.calls.get_many(await call_ids(ledger, scenario.session_id))
    pairs = list(zip(calls, calls[1:])) + [(calls[0], calls[-1])]
    for first, second in pairs:
        (row,) = await run_recipe(ledger, "reads_diff", first_call_id=first.id,
                                  second_call_id=second.id)
        diff = diff_reads(first.read_ids, second.read_ids)
        assert (row["added"], row["dropped"], row["kept"], row["moved"]) == (
            list(diff.added), list(diff.dropped), list(diff.kept), list(diff.moved))
    assert calls[-1].purpose.value == "external"
    assert diff_reads(calls[-2].read_ids, calls[-1].read_ids).moved


async def test_calls_reading_deleted_nodes_with_their_branch(ledger, scenario):
    expected = []
    for node_id in scenario.deleted_ids:
        fork_point_id, branch = await deleted_branch(ledger, node_id)
        for reading in await ledger.calls.reading(node_id):
            expected.append(((reading.call.started_at, reading.call.id, reading.position),
                             (reading.call.id, reading.position, node_id, fork_point_id,
                              branch)))
    rows = await run_recipe(ledger, "calls_reading_deleted_nodes",
                            session_id=scenario.session_id)
    assert column(rows, "call_id", "position", "node_id", "fork_point_id", "branch_ids") == [
        row for _, row in sorted(expected)]
    assert scenario.summaries[2].id in column(rows, "node_id")
    assert len({row["fork_point_id"] for row in rows}) == 2


async def test_head_chain_runs_from_root_to_head(ledger, scenario):
    head_id = (await ledger.sessions.get(scenario.session_id)).head_id
    rows = await run_recipe(ledger, "head_chain", session_id=scenario.session_id)
    chain = await ledger.nodes.get_many(await chain_ids(ledger, head_id))
    assert column(rows, "node_id", "role", "content") == [
        (n.id, n.role.value, n.content) for n in chain]
    assert column(rows, "depth") == list(range(len(chain)))
    assert chain[0].id == scenario.root_id and chain[-1].id == head_id


async def test_prompt_at_head_rolling_is_the_render(ledger, scenario):
    nodes = await ledger.nodes.get_many(scenario.node_ids)
    heads = [n.id for n in nodes if not n.deleted and n.role is not Role.SUMMARY]
    summaries_used = set()
    for head_id in heads:
        (row,) = await run_recipe(ledger, "prompt_at_head_rolling",
                                  session_id=scenario.session_id, head_id=head_id)
        rendered = await ledger.views.render(scenario.session_id, head_id)
        assert (row["summary_id"], row["node_ids"]) == (
            rendered.summary_id, list(rendered.node_ids)), head_id
        summaries_used.add(rendered.summary_id)
    assert summaries_used == {None, scenario.summaries[3].id}


def holder(summaries: dict[str, Summary], summary: Summary, node_id: str) -> str:
    """The summary holding the COVERS edge to `node_id` in `summary`'s segment."""
    while summary.absorbed_id and node_id in summaries[summary.absorbed_id].covers_ids:
        summary = summaries[summary.absorbed_id]
    return summary.id


async def test_summary_segment_is_the_covered_chain_in_order(ledger, scenario):
    by_id = {s.id: s for s in scenario.summaries}
    for summary in scenario.summaries:
        rows = await run_recipe(ledger, "summary_segment", summary_id=summary.id)
        covered = await ledger.nodes.get_many(summary.covers_ids)
        assert column(rows, "node_id", "role", "content", "held_by") == [
            (n.id, n.role.value, n.content, holder(by_id, summary, n.id)) for n in covered]
    rows = await run_recipe(ledger, "summary_segment", summary_id=scenario.summaries[2].id)
    assert len(set(column(rows, "held_by"))) == 3


STORED_NAMES = """
CALL db.labels() YIELD label RETURN 'label' AS kind, label AS name
UNION
CALL db.relationshipTypes() YIELD relationshipType
RETURN 'relationship' AS kind, relationshipType AS name
UNION
MATCH (s:Session {id: $session_id}) UNWIND keys(s) AS key RETURN 'property' AS kind, key AS name
UNION
MATCH (n:Node {session_id: $session_id}) UNWIND keys(n) AS key RETURN 'property' AS kind, key AS name
UNION
MATCH (c:Call {session_id: $session_id}) UNWIND keys(c) AS key RETURN 'property' AS kind, key AS name
UNION
MATCH ()-[r]->(:Node {session_id: $session_id}) UNWIND keys(r) AS key
RETURN 'property' AS kind, key AS name
UNION
MATCH (m:CtxdagSchema) UNWIND keys(m) AS key RETURN 'property' AS kind, key AS name
UNION
MATCH (e:Event {session_id: $session_id}) UNWIND keys(e) AS key
RETURN 'property' AS kind, key AS name
"""


async def test_every_stored_label_relationship_and_property_is_documented(ledger, scenario):
    rows = await run_cypher(ledger.db, STORED_NAMES, session_id=scenario.session_id)
    stored = {(row["kind"], row["name"]) for row in rows}
    assert {"CALLER", "ABSORBED", "REPLACED", "instructions", "retired_at", "fork_of",
            "deleted_at", "order", "position", "last_write_at", "Event", "restored_summary_id",
            "deleted_ids", "tokens_before"} <= {name for _, name in stored}
    documented = set(TABLE_ROW.findall(doc_text()))
    assert sorted(f"{kind} {name}" for kind, name in stored if name not in documented) == []


async def test_tool_calls_lists_each_use_with_its_answer(ledger):
    from tests.integration.test_tool_pairs import agent_turn, uses

    session = await ledger.sessions.create()
    _, first, result, _ = await agent_turn(ledger, session.id, "tc_1", "tc_2")
    await ledger.head.append_message(session.id, "user", "more")
    second = await ledger.head.append_message(session.id, "assistant", blocks=uses("tc_3"))
    rows = await run_recipe(ledger, "tool_calls", session_id=session.id)
    assert column(rows, "message_id", "tool_use_id", "name", "result_id", "is_error") == [
        (first.id, "tc_1", "read_file", result.id, False),
        (first.id, "tc_2", "read_file", result.id, False),
        (second.node.id, "tc_3", "read_file", None, None)]
