"""Compaction the user steers, over the GraphQL HTTP API (issue 25): a preview that writes
nothing and shows what the real run then writes, and a cut at a chosen point (`upTo`)."""
import pytest

from service.store import Limits
from service.store.invariants import violations

NODE = "id role seq predecessorId"
TURN = f"userNode {{ {NODE} }} reply {{ {NODE} }} error"
RESULT = ("status message splitTurn coveredCount tokensBefore tokensAfter coveredIds retainedIds"
          " summaryText summarizerInputTokens summarizerOutputTokens"
          " summary { id content coversIds retainedIds absorbedId }")
COMPACT = ("mutation($s: ID!, $k: Int, $h: ID, $u: ID, $d: Boolean!, $i: String) {"
           " compact(sessionId: $s, keepRecentTokens: $k, headId: $h, upTo: $u, dryRun: $d,"
           f" instructions: $i) {{ {RESULT} }} }}")
WRITES = """query($s: ID!) { session(id: $s) {
  nodeCount lastEventSeq activeSummaryId modelCalls { totalCount }
  graph(includeDeleted: true) { nodes { id } }
} }"""
RENDER = "query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) { nodeIds summaryId } } }"


async def new_session(client, strategy):
    data = await client("mutation($st: String) { createSession(title: \"controls\","
                        " systemPrompt: \"You are terse.\", summaryStrategy: $st) { id rootId } }",
                        st=strategy)
    return data["createSession"]["id"], data["createSession"]["rootId"]


async def send(client, session_id, content):
    turn = (await client(f"mutation($s: ID!, $c: String!) {{ sendMessage(sessionId: $s,"
                         f" content: $c) {{ {TURN} }} }}", s=session_id, c=content))["sendMessage"]
    assert turn["error"] is None, turn
    return [turn["userNode"]["id"], turn["reply"]["id"]]


async def chat(client, session_id, *questions):
    return [n for q in questions for n in await send(client, session_id, q)]


async def compact(client, session_id, *, keep=None, head=None, up_to=None, dry_run=False,
                  instructions=None):
    return (await client(COMPACT, s=session_id, k=keep, h=head, u=up_to, d=dry_run,
                         i=instructions))["compact"]


async def compact_errors(client, session_id, **args):
    variables = {"k": None, "h": None, "u": None, "d": False, "i": None, **args}
    return await client.errors(COMPACT, s=session_id, **variables)


async def writes(client, session_id):
    """What a write would change: nodes, events, calls, the active summary."""
    return (await client(WRITES, s=session_id))["session"]


async def render(client, session_id, head=None):
    return (await client(RENDER, s=session_id, h=head))["session"]["render"]


async def tail_tokens(client, session_id, count):
    """A keepRecentTokens that keeps exactly the last `count` nodes of HEAD's render."""
    nodes = (await client("query($s: ID!) { session(id: $s) { render { nodes { tokens } } } }",
                          s=session_id))["session"]["render"]["nodes"]
    return sum(n["tokens"] for n in nodes[-count:])


async def assert_sound(api, session_id):
    assert await violations(api.db, api.tenant, session_id, Limits()) == []


async def preview_then_compact(client, session_id, **args):
    """A preview writes nothing; the real run of the same head then writes what it showed."""
    before = await writes(client, session_id)
    preview = await compact(client, session_id, dry_run=True, **args)
    assert preview["status"] == "PREVIEWED" and preview["summary"] is None, preview
    assert await writes(client, session_id) == before
    real = await compact(client, session_id, **args)
    assert real["status"] == "COMPACTED", real
    summary = real["summary"]
    assert summary["coversIds"] == preview["coveredIds"] == real["coveredIds"]
    assert summary["content"] == preview["summaryText"] == real["summaryText"]
    assert summary["retainedIds"] == preview["retainedIds"] == real["retainedIds"]
    for key in ("coveredCount", "tokensBefore", "tokensAfter", "splitTurn", "message",
                "summarizerInputTokens", "summarizerOutputTokens"):
        assert preview[key] == real[key], key
    after = await writes(client, session_id)
    assert after["nodeCount"] == before["nodeCount"] + 1
    assert after["modelCalls"]["totalCount"] == before["modelCalls"]["totalCount"] + 1
    assert after["lastEventSeq"] == before["lastEventSeq"] + 2  # started, finished
    assert after["activeSummaryId"] == summary["id"]
    return preview, summary


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_a_preview_writes_nothing_and_the_real_run_writes_what_it_showed(api, strategy):
    client = api.client
    sid, root = await new_session(client, strategy)
    turns = await chat(client, sid, "One.", "Two.", "Three.")
    preview, first = await preview_then_compact(client, sid,
                                                keep=await tail_tokens(client, sid, 2))
    assert preview["coveredIds"] == turns[:4] and preview["retainedIds"] == turns[4:]
    assert preview["tokensAfter"] < preview["tokensBefore"]

    # Again over the summary: the preview shows the whole segment, the old one extended.
    more = await chat(client, sid, "Four.", "Five.")
    preview, second = await preview_then_compact(client, sid,
                                                 keep=await tail_tokens(client, sid, 2),
                                                 instructions="Keep the numbers.")
    assert second["absorbedId"] == first["id"]
    assert preview["coveredIds"] == turns + more[:2] and preview["retainedIds"] == more[2:]
    assert "Focus instructions" in preview["summaryText"]
    assert await render(client, sid) == {"nodeIds": [root, second["id"], *more[2:]],
                                         "summaryId": second["id"]}
    await assert_sound(api, sid)


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_a_preview_with_nothing_to_compact_is_skipped_and_writes_nothing(api, strategy):
    client = api.client
    sid, _ = await new_session(client, strategy)
    await chat(client, sid, "One.")
    before = await writes(client, sid)
    skipped = await compact(client, sid, dry_run=True)
    assert skipped["status"] == "SKIPPED" and skipped["coveredIds"] == []
    assert await writes(client, sid) == before


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_compact_up_to_covers_through_the_point_and_keeps_the_rest(api, strategy):
    client = api.client
    sid, root = await new_session(client, strategy)
    turns = await chat(client, sid, "One.", "Two.", "Three.", "Four.")
    _, first = await preview_then_compact(client, sid, up_to=turns[3])
    assert first["coversIds"] == turns[:4]
    assert await render(client, sid) == {"nodeIds": [root, first["id"], *turns[4:]],
                                         "summaryId": first["id"]}

    # The next point absorbs the summary; a point on an assistant reply keeps the tail
    # opening on a user turn, a point on a user turn splits that turn (and says so).
    _, second = await preview_then_compact(client, sid, up_to=turns[4])
    assert (second["absorbedId"], second["coversIds"]) == (first["id"], turns[:5])
    assert await render(client, sid) == {"nodeIds": [root, second["id"], *turns[5:]],
                                         "summaryId": second["id"]}
    await assert_sound(api, sid)


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_up_to_the_user_turn_reports_a_split_turn(api, strategy):
    client = api.client
    sid, _ = await new_session(client, strategy)
    turns = await chat(client, sid, "One.", "Two.", "Three.")
    result = await compact(client, sid, up_to=turns[2])
    assert (result["status"], result["splitTurn"]) == ("COMPACTED", True)
    assert result["message"] and result["retainedIds"] == turns[3:]


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_up_to_the_head_splits_its_turn_unless_a_reply_ends_it(api, strategy):
    """upTo the head: nothing is retained. A head user turn is split all the same (its
    reply, when it comes, follows the summary without it); a head reply ends its turn."""
    client = api.client
    sid, _ = await new_session(client, strategy)
    turns = await chat(client, sid, "One.", "Two.", "Three.")
    replied = await compact(client, sid, up_to=turns[-1], dry_run=True)
    assert (replied["status"], replied["splitTurn"], replied["message"]) == \
        ("PREVIEWED", False, None)
    asked = (await client("mutation($s: ID!) { appendMessage(sessionId: $s, role: USER,"
                          " content: \"Four?\") { id } }", s=sid))["appendMessage"]["id"]
    result = await compact(client, sid, up_to=asked)
    assert (result["status"], result["splitTurn"], result["retainedIds"]) == \
        ("COMPACTED", True, [])
    assert "reply still to come" in result["message"]
    assert result["coveredIds"] == [*turns, asked]
    await assert_sound(api, sid)

@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_up_to_on_an_interior_checkout(api, strategy):
    """HEAD checked out inside the chain, then grown into a fork: upTo cuts that head's
    render; a point on the other branch is not on its chain; the other branch keeps its
    own render, as the strategy decides it."""
    client = api.client
    sid, root = await new_session(client, strategy)
    u1, a1, u2, a2, u3, a3 = await chat(client, sid, "One.", "Two.", "Three.")
    await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n)"
                 " { headId } }", s=sid, n=a2)
    u4, a4 = await send(client, sid, "Four, on a fork.")
    before = await writes(client, sid)
    off_chain = await compact_errors(client, sid, u=u3)
    assert off_chain[0]["extensions"]["code"] == "BAD_INPUT"
    assert f"upTo {u3} is not a turn on the chain of head {a4}" in off_chain[0]["message"]
    assert await writes(client, sid) == before

    _, summary = await preview_then_compact(client, sid, up_to=a1)
    assert summary["coversIds"] == [u1, a1] and summary["retainedIds"] == [u2, a2, u4, a4]
    assert await render(client, sid) == {"nodeIds": [root, summary["id"], u2, a2, u4, a4],
                                         "summaryId": summary["id"]}
    # The other branch: rolling renders the active summary wherever its segment is on the
    # chain; branch renders only summaries compacted on the head's own path.
    other = await render(client, sid, a3)
    if strategy == "rolling":
        assert other == {"nodeIds": [root, summary["id"], u2, a2, u3, a3],
                         "summaryId": summary["id"]}
    else:
        assert other == {"nodeIds": [root, u1, a1, u2, a2, u3, a3], "summaryId": None}

    # upTo on a named head (the other branch) covers that head's chain.
    _, there = await preview_then_compact(client, sid, head=a3, up_to=u3)
    assert there["retainedIds"] == [a3]
    assert await render(client, sid, a3) == {"nodeIds": [root, there["id"], a3],
                                             "summaryId": there["id"]}
    await assert_sound(api, sid)


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_up_to_refuses_bad_points_and_writes_nothing(api, strategy):
    client = api.client
    sid, root = await new_session(client, strategy)
    turns = await chat(client, sid, "One.", "Two.")
    summary = (await compact(client, sid, up_to=turns[1]))["summary"]
    question = (await client("mutation($s: ID!) { appendMessage(sessionId: $s, role: USER,"
                             " content: \"Read it.\") { id } }", s=sid))["appendMessage"]["id"]
    use = (await client(
        "mutation($s: ID!, $b: [ContentBlockInput!]) { appendMessage(sessionId: $s,"
        " role: ASSISTANT, blocks: $b) { id } }", s=sid, b=[
            {"text": {"text": "Reading."}},
            {"toolUse": {"id": "toolu_read", "name": "read", "input": {"path": "a"}}}]
    ))["appendMessage"]["id"]
    answer = (await client(
        "mutation($s: ID!) { appendMessage(sessionId: $s, role: TOOL, blocks: [{toolResult:"
        " {toolUseId: \"toolu_read\", content: \"text of a\"}}]) { id } }", s=sid
    ))["appendMessage"]["id"]
    others_sid, _ = await new_session(api.other, strategy)
    others = await chat(api.other, others_sid, "Theirs.")
    before = await writes(client, sid)

    cases = {
        "a point inside the current summary's segment": (
            {"u": turns[0]}, f"upTo {turns[0]} lies inside the current summary's segment"),
        "the summary itself": ({"u": summary["id"]}, "inside the current summary's segment"),
        "the ROOT": ({"u": root}, f"upTo {root} is not a turn on the chain"),
        "an unknown node": ({"u": "nod_missing"}, "upTo nod_missing is not a turn"),
        "another tenant's node": ({"u": others[0]}, f"upTo {others[0]} is not a turn"),
        "a reply whose tool uses are answered after it": (
            {"u": use}, "would separate tool uses from their results (toolu_read)"),
        "both a point and a budget": ({"u": question, "k": 1}, "not both"),
        "a preview at a bad point": ({"u": use, "d": True}, "would separate tool uses"),
        "an empty id": ({"u": ""}, "upTo"),
    }
    for case, (args, message) in cases.items():
        errors = await compact_errors(client, sid, **args)
        assert errors[0]["extensions"]["code"] == "BAD_INPUT", case
        assert message in errors[0]["message"], (case, errors[0]["message"])
        assert await writes(client, sid) == before, case

    # The answer closes the pair: a cut after it is sound.
    result = await compact(client, sid, up_to=answer)
    assert result["summary"]["coversIds"] == [*turns, question, use, answer]
    await assert_sound(api, sid)
