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


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_a_deleted_active_summary_never_comes_back_through_an_uncompact(api, strategy):
    """Deleting the branch of the active summary leaves no active summary: the one it
    replaced does not come back, neither then nor when a later compaction is undone."""
    client = api.client
    sid, root = await new_session(client, strategy)
    u1, a1 = await send(client, sid, "First question.")
    u2, a2 = await send(client, sid, "Second question.")
    s3 = await compacted(client, sid, keep=1)
    assert s3["coversIds"] == [u1, a1, u2, a2]
    edit = (await client(f"mutation($n: ID!) {{ editMessage(nodeId: $n, content:"
                         f" \"Second question, again.\") {{ {TURN} }} }}", n=u2))["editMessage"]
    u4, a4 = edit["userNode"]["id"], edit["reply"]["id"]
    s5 = await compacted(client, sid, keep=1)
    assert s5["coversIds"] == [u1, a1, u4, a4]
    assert (await state(client, sid))["activeSummaryId"] == s5["id"]

    deleted = (await client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s,"
                            " tipId: $t) { headId activeSummaryId } }", s=sid, t=a4))
    assert deleted["deleteBranch"] == {"headId": a1, "activeSummaryId": None}
    after = await state(client, sid, a2)
    assert (after["activeSummaryId"], after["activeSummary"]) == (None, None)
    await assert_sound(api, sid)

    if strategy == "rolling":  # S3 is a relic: a2 renders verbatim and compacts afresh
        assert after["render"] == {"nodeIds": [root, u1, a1, u2, a2], "summaryId": None}
        s7 = await compacted(client, sid, keep=1, head=a2)
        assert (s7["absorbedId"], s7["coversIds"]) == (None, [u1, a1, u2, a2])
        head, expected = a2, {"nodeIds": [root, u1, a1, u2, a2], "summaryId": None}
    else:  # S3 still applies to a2 (every live summary counts): a compaction absorbs it
        assert after["render"] == {"nodeIds": [root, s3["id"]], "summaryId": s3["id"]}
        await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n)"
                     " { headId } }", s=sid, n=a2)
        tail = [*await send(client, sid, "Third question."),
                *await send(client, sid, "Fourth question.")]
        s7 = await compacted(client, sid, keep=1)
        assert (s7["absorbedId"], s7["coversIds"]) == (s3["id"], [u1, a1, u2, a2, *tail])
        head, expected = tail[-1], {"nodeIds": [root, s3["id"], *tail], "summaryId": s3["id"]}
    assert (await state(client, sid))["activeSummaryId"] == s7["id"]

    undone = (await client("mutation($x: ID!) { uncompact(summaryId: $x) { restoredSummaryId"
                           " session { activeSummaryId activeSummary { id } } } }",
                           x=s7["id"]))["uncompact"]
    assert undone == {"restoredSummaryId": None,
                      "session": {"activeSummaryId": None, "activeSummary": None}}
    final = await state(client, sid, head)
    assert final["render"] == expected
    if strategy == "rolling":  # no capsule: S3 stays a relic
        rows = {r["id"]: r for r in final["graph"]["nodes"]}
        assert (rows[s3["id"]]["supersededSummary"], rows[s3["id"]]["coversIds"]) == (True, None)
    await assert_sound(api, sid)


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
