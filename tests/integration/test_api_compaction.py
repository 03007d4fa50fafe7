"""Compaction and its undo over the GraphQL HTTP API, replaying the minimized sequences
of the defects found by comparing random user moves with a model of the README's rules."""
import pytest

from service.store import Limits
from service.store.invariants import violations

NODE = "id role seq predecessorId"
TURN = f"userNode {{ {NODE} }} reply {{ {NODE} }} error"
SUMMARY = "id coversIds retainedIds absorbedId superseded retired deleted"
STATE = """query($s: ID!, $h: ID) { session(id: $s) {
  headId activeSummaryId activeSummary { id }
  render(headId: $h) { nodeIds summaryId }
  graph { nodes { id supersededSummary coversIds } }
} }"""


async def new_session(client, strategy):
    data = await client("mutation($st: String) { createSession(title: \"compaction\","
                        " systemPrompt: \"You are terse.\", summaryStrategy: $st) { id rootId } }",
                        st=strategy)
    return data["createSession"]["id"], data["createSession"]["rootId"]


async def send(client, session_id, content):
    turn = (await client(f"mutation($s: ID!, $c: String!) {{ sendMessage(sessionId: $s,"
                         f" content: $c) {{ {TURN} }} }}", s=session_id, c=content))["sendMessage"]
    assert turn["error"] is None, turn
    return turn["userNode"]["id"], turn["reply"]["id"]


async def compact(client, session_id, keep=None, head=None):
    return (await client(
        f"mutation($s: ID!, $k: Int, $h: ID) {{ compact(sessionId: $s, keepRecentTokens: $k,"
        f" headId: $h) {{ status message summary {{ {SUMMARY} }} }} }}",
        s=session_id, k=keep, h=head))["compact"]


async def compacted(client, session_id, keep=None, head=None):
    result = await compact(client, session_id, keep, head)
    assert result["status"] == "COMPACTED", result
    return result["summary"]


async def state(client, session_id, head=None):
    return (await client(STATE, s=session_id, h=head))["session"]


async def assert_sound(api, session_id):
    assert await violations(api.db, api.tenant, session_id, Limits()) == []


@pytest.mark.parametrize("strategy", ["branch", "rolling"])
async def test_the_previous_summary_is_covered_even_when_the_tail_after_it_fits(api, strategy):
    """Spec §4: the view's first element, the previous summary, lands on the covered side;
    the cut moves forward to the first user turn, so the tail [u13, a13] is retained."""
    client = api.client
    sid, root = await new_session(client, strategy)
    turns = [n for q in ("One.", "Two.", "Three.") for n in await send(client, sid, q)]
    s9 = await compacted(client, sid, keep=1, head=turns[4])  # its segment ends on a user turn
    assert s9["coversIds"] == turns[:5]
    retried = (await client(f"mutation($n: ID!) {{ retry(nodeId: $n) {{ {TURN} }} }}",
                            n=turns[5]))["retry"]
    a11 = retried["reply"]["id"]
    assert (await state(client, sid))["render"]["nodeIds"] == [root, s9["id"], a11]
    u13, a13 = await send(client, sid, "Four.")

    s = await compacted(client, sid, head=a13)  # the default keep: everything would fit
    assert (s["absorbedId"], s["coversIds"], s["retainedIds"]) == (
        s9["id"], [*turns[:5], a11], [u13, a13])
    assert (await state(client, sid, a13))["render"] == {"nodeIds": [root, s["id"], u13, a13],
                                                         "summaryId": s["id"]}
    await assert_sound(api, sid)

    # Now the first turn after the summary opens the tail, and it fits: nothing new to cover.
    u15, a15 = await send(client, sid, "Five.")
    result = await compact(client, sid)
    assert (result["status"], result["summary"]) == ("SKIPPED", None), result
    assert "already fit" in result["message"]
    assert (await state(client, sid))["render"]["nodeIds"] == [root, s["id"], u13, a13, u15, a15]
