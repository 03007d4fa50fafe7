"""A grown transcript's extension is checked for what its new nodes can break
(cypher/fragments/check_extension_invariants.cypher), on the real Neo4j.

The Claude Code fixture is imported up to its last turn before the compaction; the file
grown by the compaction and two turns gives the extension (a summary, u4, a9). Each case
breaks one invariant in the statement's parameters, past the document's own checks, and
the statement must refuse it with an error naming it and write nothing.
"""
import json
from pathlib import Path

import pytest

from service import transcripts
from service.errors import BadInput, Conflict
from service.store.transcripts import extension, store_transcript, write_extension
from tests.integration.helpers import assert_sound

SESSION = Path(__file__).parent.parent / "fixtures" / "transcripts" / "claude_code" / "session.jsonl"
LINES = SESSION.read_text().splitlines(keepends=True)


def read(ledger, lines, name=SESSION.name):
    return transcripts.read("".join(lines), name, "claude-code", ledger.tenant, ledger.limits)


async def stored_state(ledger, session_id):
    rows = await ledger.db.read("check_session", session_id=session_id, tenant=ledger.tenant,
                                after_seq=-2**63, after_id="", page=1)
    session = rows[0]["session"]
    return (rows[0]["node_count"], (await ledger.sessions.get(session_id)).head_id,
            session["next_seq"], session["next_event_seq"], session["summary_version"])


def by_entry(params, entry):
    """The new row whose source entries start with `entry`."""
    for row in params["nodes"]:
        if json.loads(row["properties"]["metadata"])["source"].get("entries", [None])[0] == entry:
            return row
    raise AssertionError(f"no new row for {entry}")


async def node_of(ledger, document, entry):
    """The stored node (id, depth) of a source entry."""
    for row in document["nodes"]:
        meta = json.loads(row["properties"]["metadata"])
        if meta["source"].get("entries", [None])[0] == entry:
            return row["properties"]["id"], row["properties"]["depth"]
    raise AssertionError(entry)


@pytest.fixture
async def grown(ledger):
    first = read(ledger, LINES[:17])  # up to a8, the head; the u2 branch ends at a6
    await store_transcript(ledger.db, ledger.tenant, first, ledger.limits, ledger.events)
    sid = first["session"]["properties"]["id"]
    document = read(ledger, LINES[:21])  # + the compaction, u4 and a9
    found = await ledger.db.read_on_leader(
        "transcript_stored", session_id=sid, tenant=ledger.tenant,
        node_ids=[r["properties"]["id"] for r in document["nodes"]], label_node_ids=[],
        new_turns=[])
    params = extension(document, set(found[0]["stored_ids"]), found[0]["next_seq"],
                       ledger.tenant, ledger.limits)
    assert [json.loads(r["properties"]["metadata"])["source"]["entries"][0]
            for r in params["nodes"]] == ["cb1", "u4", "a9"]
    return sid, first, params


async def refused(ledger, sid, params, error, says):
    before = await stored_state(ledger, sid)
    with pytest.raises(error) as caught:
        await write_extension(ledger.db, params, ledger.events)
    assert says in caught.value.message
    assert await stored_state(ledger, sid) == before
    await assert_sound(ledger, sid)


async def test_the_extension_unbroken_is_written(ledger, grown):
    sid, _, params = grown
    await write_extension(ledger.db, params, ledger.events)
    await assert_sound(ledger, sid)
    assert (await ledger.sessions.get(sid)).head_id == params["head_id"]


async def test_a_predecessor_not_in_the_session(ledger, grown):
    sid, _, params = grown
    by_entry(params, "u4")["predecessor_id"] = "not-a-node"
    await refused(ledger, sid, params, BadInput, "has 0 predecessors")


async def test_a_predecessor_of_another_session(ledger, grown):
    sid, _, params = grown
    other = read(ledger, LINES[:3], "other.jsonl")
    await store_transcript(ledger.db, ledger.tenant, other, ledger.limits, ledger.events)
    by_entry(params, "u4")["predecessor_id"] = other["nodes"][1]["properties"]["id"]
    await refused(ledger, sid, params, BadInput, "crosses sessions")


async def test_a_deleted_predecessor(ledger, grown):
    sid, first, params = grown
    a6, depth = await node_of(ledger, first, "a6")
    await ledger.head.delete_branch(sid, a6)
    row = by_entry(params, "u4")
    row["predecessor_id"], row["properties"]["depth"] = a6, depth + 1
    by_entry(params, "a9")["properties"]["depth"] = depth + 2
    await refused(ledger, sid, params, BadInput, "hangs under deleted")


async def test_a_depth_out_of_order(ledger, grown):
    sid, _, params = grown
    by_entry(params, "a9")["properties"]["depth"] += 1
    await refused(ledger, sid, params, BadInput, "breaks the depth order")


async def test_a_node_id_held_by_another_session(ledger, grown):
    sid, _, params = grown
    other = read(ledger, LINES[:3], "other.jsonl")
    await store_transcript(ledger.db, ledger.tenant, other, ledger.limits, ledger.events)
    taken = other["nodes"][1]["properties"]["id"]
    a9 = by_entry(params, "a9")
    a9["properties"]["id"] = taken
    params["head_id"] = taken
    await refused(ledger, sid, params, Conflict, f"ids already exist ({taken})")


async def test_a_turn_after_tool_uses_that_does_not_answer_them(ledger, grown):
    sid, first, params = grown
    a3, depth = await node_of(ledger, first, "a1")  # the merged reply holding two tool uses
    row = by_entry(params, "u4")
    row["predecessor_id"], row["properties"]["depth"] = a3, depth + 1
    by_entry(params, "a9")["properties"]["depth"] = depth + 2
    await refused(ledger, sid, params, BadInput, "only a tool message answering every one")


async def test_an_answer_to_no_tool_use_of_its_predecessor(ledger, grown):
    sid, _, params = grown
    a9 = by_entry(params, "a9")
    a9["properties"]["answered_ids"] = ["toolu_nowhere"]
    a9["answers"], a9["answer_errors"] = ["toolu_nowhere"], [False]
    await refused(ledger, sid, params, BadInput, "ANSWERS: ")


async def test_a_summary_covering_no_contiguous_segment(ledger, grown):
    sid, _, params = grown
    summary = by_entry(params, "cb1")
    summary["covers"] = summary["covers"][:1] + summary["covers"][2:]
    summary["covers"] = [{**c, "order": i} for i, c in enumerate(summary["covers"])]
    summary["properties"]["covers_new_count"] = len(summary["covers"])
    await refused(ledger, sid, params, BadInput, "does not cover a contiguous chain segment")


async def test_a_summary_neither_active_nor_superseded(ledger, grown):
    sid, _, params = grown
    params["active_summary_id"] = None
    await refused(ledger, sid, params, BadInput, "is neither active nor superseded")


async def test_head_on_a_summary(ledger, grown):
    sid, _, params = grown
    params["head_id"] = by_entry(params, "cb1")["properties"]["id"]
    await refused(ledger, sid, params, BadInput, "is not a live turn of this session")
