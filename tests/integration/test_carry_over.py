"""Branch summaries over the GraphQL HTTP API (issue 25, item 5): carryOver and
checkout(summarizeLeft) write one carry node on the target branch, standing for the turns of
the branch left (its CARRIES_OVER provenance), and refuse what has nothing to summarize."""
import copy

import pytest

from service.errors import BadInput
from service.store import Limits
from service.store.backup import VERSION, export_session, import_session
from service.store.invariants import violations
from tests.integration.helpers import DELETE_SESSION, as_version_3, run_cypher
from tests.integration.test_compaction_controls import chat, new_session
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai, uncached

CARRY = ("mutation($s: ID!, $f: ID!, $i: ID!, $x: String) { carryOver(sessionId: $s,"
         " fromTip: $f, intoHead: $i, instructions: $x) { headMoved carriedIds"
         " summarizerInputTokens node { id role content predecessorId carriedIds"
         " carriedFrom { id } metadata } session { headId } } }")
CHECKOUT = ("mutation($s: ID!, $n: ID!, $l: Boolean!, $x: String) { checkout(sessionId: $s,"
            " nodeId: $n, summarizeLeft: $l, summaryInstructions: $x) { headId"
            " head { id role predecessorId carriedIds } } }")
WRITES = """query($s: ID!) { session(id: $s) {
  headId nodeCount lastEventSeq modelCalls { totalCount } } }"""
RENDER = ("query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) { nodeIds"
          " anthropic: request(format: ANTHROPIC_MESSAGES)"
          " openai: request(format: OPENAI_CHAT) } } }")


async def carry(client, sid, from_tip, into_head, instructions=None):
    return (await client(CARRY, s=sid, f=from_tip, i=into_head, x=instructions))["carryOver"]


async def render(client, sid, head=None):
    return (await client(RENDER, s=sid, h=head))["session"]["render"]


async def forked(client, strategy="rolling"):
    """ROOT, a1..a4 (two exchanges), then a fork b from a2 (two exchanges): HEAD on b's tip."""
    sid, root = await new_session(client, strategy)
    a = await chat(client, sid, "Try the first plan.", "It fails on big inputs.")
    await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) { headId } }",
                 s=sid, n=a[1])
    b = await chat(client, sid, "Try the second plan.", "Measure it.")
    return sid, root, a, b


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_a_carry_over_appends_a_summary_of_the_branch_left_to_the_target(api, strategy):
    client = api.client
    sid, root, a, b = await forked(client, strategy)
    source_before = await render(client, sid, a[-1])
    target_before = await render(client, sid, b[-1])

    # Into HEAD (b's tip): HEAD moves onto the carry node.
    result = await carry(client, sid, a[-1], b[-1], "Keep what failed.")
    node = result["node"]
    assert result["headMoved"] and result["session"]["headId"] == node["id"]
    assert node["role"] == "CARRY" and node["predecessorId"] == b[-1]
    assert result["carriedIds"] == node["carriedIds"] == a[2:]  # below the ancestor a[1]
    assert [n["id"] for n in node["carriedFrom"]] == a[2:]
    assert "Another branch" in node["content"] and "big inputs" in node["content"]
    assert node["metadata"]["summarizer"] == "offline-extractive"

    # The target renders it in place; the source renders as it did.
    target = await render(client, sid)
    assert target["nodeIds"] == target_before["nodeIds"] + [node["id"]]
    assert await render(client, sid, a[-1]) == source_before
    for body, check in ((target["anthropic"], assert_valid_anthropic),
                        (target["openai"], assert_valid_openai)):
        check(body)
    last = uncached(target["anthropic"])["messages"][-1]
    assert last["role"] == "user" and last["content"].startswith(
        "<summary of another branch of this conversation, left for this one>")

    # Provenance: the carried turns name it, the summarizer's call read exactly them.
    data = await client("query($n: ID!) { node(id: $n) { ... on Message { carriedBy { id } } } }",
                        n=a[2])
    assert data["node"]["carriedBy"] == [{"id": node["id"]}]
    calls = await client("query($n: ID!) { node(id: $n) { ... on Message { readBy { nodes {"
                         " purpose readIds outputId } } } } }", n=a[2])
    assert calls["node"]["readBy"]["nodes"][0] == {"purpose": "SUMMARIZE", "readIds": a[2:],
                                                   "outputId": node["id"]}
    assert await violations(api.db, api.tenant, sid, Limits()) == []


async def test_the_offline_summarizer_reads_the_turns_alone_and_is_offered_no_tools(api):
    """A tool set in force at the tip changes nothing offline: no request is sent, so the
    call names no tools, reads the carried turns only, and says which summarizer it was."""
    client = api.client
    sid, root, a, b = await forked(client)
    await client("mutation($s: ID!, $t: [ToolInput!]!) { setTools(sessionId: $s, tools: $t)"
                 " { version } }", s=sid, t=[{"name": "lookup", "inputSchema": {"type": "object"}}])
    node = (await carry(client, sid, a[-1], b[-1], "Keep numbers."))["node"]
    assert node["metadata"]["summarizer"] == "offline-extractive"
    assert "ignored by the offline summarizer" in node["content"]
    data = await client("query($n: ID!) { node(id: $n) { ... on Message { readBy { nodes {"
                        " purpose provider headId toolsSha256 readIds outputId } } } } }",
                        n=a[2])
    summarizing = [c for c in data["node"]["readBy"]["nodes"] if c.pop("purpose") == "SUMMARIZE"]
    assert summarizing == [{
        "provider": "offline-extractive", "headId": None, "toolsSha256": None,
        "readIds": a[2:], "outputId": node["id"]}]


async def test_a_carry_over_into_another_head_leaves_head_alone(api):
    client = api.client
    sid, root, a, b = await forked(client)
    result = await carry(client, sid, b[-1], a[-1])
    assert not result["headMoved"] and result["session"]["headId"] == b[-1]
    assert result["carriedIds"] == b
    assert (await render(client, sid, result["node"]["id"]))["nodeIds"] == [root, *a,
                                                                           result["node"]["id"]]


async def test_checkout_with_summarize_left_moves_head_onto_the_carry_node(api):
    client = api.client
    sid, root, a, b = await forked(client)
    before = (await client(WRITES, s=sid))["session"]
    events = before["lastEventSeq"]
    data = (await client(CHECKOUT, s=sid, n=a[-1], l=True, x=None))["checkout"]
    head = data["head"]
    assert (head["role"], head["predecessorId"], data["headId"]) == ("CARRY", a[-1], head["id"])
    assert head["carriedIds"] == b
    after = (await client(WRITES, s=sid))["session"]
    assert after["nodeCount"] == before["nodeCount"] + 1
    assert after["modelCalls"]["totalCount"] == before["modelCalls"]["totalCount"] + 1
    assert after["lastEventSeq"] == events + 3  # node_appended, head_moved, branch_carried
    # A plain checkout still is one.
    plain = (await client(CHECKOUT, s=sid, n=b[-1], l=False, x=None))["checkout"]
    assert plain["headId"] == b[-1]
    assert await violations(api.db, api.tenant, sid, Limits()) == []


async def test_what_has_nothing_to_summarize_is_refused_and_writes_nothing(api):
    client = api.client
    sid, root, a, b = await forked(client)
    other, other_root = await new_session(client, "rolling")
    before = (await client(WRITES, s=sid))["session"]
    cases = {
        "same node": (b[-1], b[-1]),
        "an ancestor of the target": (b[0], b[-1]),
        "ROOT": (root, b[-1]),
        "another session's tip": (other_root, b[-1]),
        "another session's target": (a[-1], other_root),
        "an unknown tip": ("nod_unknown", b[-1]),
        "a blank id": ("", b[-1]),
    }
    for what, (from_tip, into_head) in cases.items():
        errors = await client.errors(CARRY, s=sid, f=from_tip, i=into_head, x=None)
        code = errors[0]["extensions"]["code"]
        assert code in ("BAD_INPUT", "NOT_FOUND"), (what, errors)
    errors = await client.errors(CARRY, s=sid, f=a[-1], i=b[-1], x="   ")
    assert errors[0]["extensions"]["code"] == "BAD_INPUT"
    assert "nothing to carry" in (await client.errors(CARRY, s=sid, f=b[0], i=b[-1],
                                                      x=None))[0]["message"]
    # checkout: into a descendant of HEAD there is nothing left; HEAD stays.
    errors = await client.errors(CHECKOUT, s=sid, n=b[-1], l=True, x=None)
    assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors
    errors = await client.errors(CHECKOUT, s=sid, n=a[-1], l=False, x="Keep it.")
    assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors
    assert (await client(WRITES, s=sid))["session"] == before

    # A deleted branch is not carried.
    await client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s, tipId: $t) { headId } }",
                 s=sid, t=a[-1])
    errors = await client.errors(CARRY, s=sid, f=a[-1], i=b[-1], x=None)
    assert errors[0]["extensions"]["code"] == "BAD_INPUT" and "deleted" in errors[0]["message"]


async def test_a_target_with_open_tool_uses_takes_no_carry_node(api):
    client = api.client
    sid, root, a, b = await forked(client)
    use = {"toolUse": {"id": "toolu_open1", "name": "search", "input": {"q": "x"}}}
    opened = await client("mutation($s: ID!, $b: [ContentBlockInput!]) { appendMessage("
                          "sessionId: $s, role: ASSISTANT, blocks: $b) { id } }", s=sid, b=[use])
    before = (await client(WRITES, s=sid))["session"]
    errors = await client.errors(CARRY, s=sid, f=a[-1], i=opened["appendMessage"]["id"], x=None)
    assert errors[0]["extensions"]["code"] == "BAD_INPUT" and "toolu_open1" in errors[0]["message"]
    after = (await client(WRITES, s=sid))["session"]
    # The summarizer's call is not recorded for a refused write (it rolled back with it).
    assert after == before


async def test_carry_nodes_travel_through_export_and_import_and_check_names_bad_edges(api):
    client = api.client
    sid, root, a, b = await forked(client)
    carried = (await carry(client, sid, a[-1], b[-1]))["node"]["id"]
    renders = {tip: await render(client, sid, tip) for tip in (a[-1], carried)}
    document = await export_session(api.db, api.tenant, sid, Limits())
    assert document["version"] == VERSION
    row = next(n for n in document["nodes"] if n["properties"]["id"] == carried)
    assert row["carries_over"] == [{"node_id": n, "order": i} for i, n in enumerate(a[2:])]
    assert (row["properties"]["role"], row["properties"]["carried_from_id"],
            row["properties"]["carried_count"]) == ("carry", a[-1], 2)

    await run_cypher(api.db, DELETE_SESSION, sid=sid)
    assert await import_session(api.db, api.tenant, document, Limits()) == sid
    assert {tip: await render(client, sid, tip) for tip in renders} == renders
    data = await client("query($n: ID!) { node(id: $n) { ... on Message { carriedIds } } }",
                        n=carried)
    assert data["node"]["carriedIds"] == a[2:]
    assert await violations(api.db, api.tenant, sid, Limits()) == []

    # A version 3 document has no carries_over: its carry node stands for nothing, refused.
    await run_cypher(api.db, DELETE_SESSION, sid=sid)
    version_3 = as_version_3(document)
    with pytest.raises(BadInput, match="CARRIES_OVER"):
        await import_session(api.db, api.tenant, version_3, Limits())
    # ... and one that names a turn on the carry node's own chain is not a branch left.
    wrong = copy.deepcopy(document)
    row = next(n for n in wrong["nodes"] if n["properties"]["id"] == carried)
    row["carries_over"] = [{"node_id": b[0], "order": 0}, {"node_id": b[1], "order": 1}]
    with pytest.raises(BadInput, match="CARRIES_OVER"):
        await import_session(api.db, api.tenant, wrong, Limits())

    # ctxdag check names a carry edge the API could not have written.
    assert await import_session(api.db, api.tenant, document, Limits()) == sid
    await run_cypher(api.db, "MATCH (:Node {id: $c})-[e:CARRIES_OVER {order: 1}]->() DELETE e",
                     c=carried)
    found = await violations(api.db, api.tenant, sid, Limits())
    assert any(v.startswith(f"CARRIES_OVER: {carried}") for v in found), found
