"""The analyst's questions over GraphQL: object lookup, pages of calls and readers, which
summaries cover a node, and replay — each checked against the store's own answer."""
from service.store import Ledger, Limits
from service.store.calls import diff_reads
from service.turns.replay import replay as store_replay
from tests.api_client import GraphQLErrors
from tests.integration.test_api import new_session, send

PAGE = "pageInfo { startCursor endCursor hasNextPage hasPreviousPage } totalCount"


async def compact(client, session_id, keep):
    data = await client("mutation($s: ID!, $k: Int) { compact(sessionId: $s, "
                        "keepRecentTokens: $k) { status summary { id coversIds } } }",
                        s=session_id, k=keep)
    assert data["compact"]["status"] == "COMPACTED", data
    return data["compact"]["summary"]


async def two_compactions(client):
    """A session of chat turns, compacted, one more turn, compacted again."""
    session = await new_session(client, "analyst")
    turns = [await send(client, session["id"], f"Question {i}. ".ljust(200, "x"))
             for i in range(4)]
    first = await compact(client, session["id"], 60)
    after_first = await send(client, session["id"], "Question 4. ".ljust(200, "x"))
    await send(client, session["id"], "Question 5. ".ljust(200, "x"))
    second = await compact(client, session["id"], 60)
    return session, turns, first, after_first, second


async def test_covered_by_names_every_summary_holding_a_node_and_the_active_one(api):
    session, turns, first, _, second = await two_compactions(api.client)
    covered = turns[0]["userNode"]["id"]
    assert covered in first["coversIds"] and covered in second["coversIds"]
    data = await api.client(
        "query($n: ID!, $r: ID!) { covered: node(id: $n) { ... on Message { coveredBy {"
        " id isActive superseded } } } root: node(id: $r) { ... on Message {"
        " coveredBy { id } } } }", n=covered, r=session["rootId"])
    assert data["covered"]["coveredBy"] == [
        {"id": second["id"], "isActive": True, "superseded": False},
        {"id": first["id"], "isActive": False, "superseded": True}]
    assert data["root"]["coveredBy"] == []


async def test_replay_shows_how_todays_render_of_the_same_head_differs(api):
    session, turns, first, after_first, second = await two_compactions(api.client)
    query = ("query($c: ID!) { call(id: $c) { headId readIds replay { system messages currentIds"
             " differs addedIds removedIds removed { id role } } } }")
    # Read with the first summary; its head now lies inside the second summary's segment,
    # so today it renders verbatim: the first summary gives way to the turns it covered.
    call = (await api.client(query, c=after_first["call"]["id"]))["call"]
    replay = call["replay"]
    assert first["id"] in call["readIds"] and call["headId"] in second["coversIds"]
    assert replay["differs"] is True
    assert replay["removedIds"] == [first["id"]] and replay["addedIds"] == first["coversIds"]
    assert replay["removed"] == [{"id": first["id"], "role": "SUMMARY"}]
    diff = diff_reads(call["readIds"], replay["currentIds"])
    assert (replay["addedIds"], replay["removedIds"]) == (list(diff.added), list(diff.dropped))
    stored = await store_replay(Ledger.open(api.db, api.tenant, Limits()),
                                after_first["call"]["id"])
    assert (replay["system"], replay["messages"]) == (stored.system, list(stored.messages))
    assert replay["currentIds"] == list(stored.current_ids)
    assert replay["messages"][0]["content"].startswith("<summary of the earlier conversation>")
    # Read verbatim before any compaction, and still rendered so.
    call = (await api.client(query, c=turns[-1]["call"]["id"]))["call"]
    assert call["replay"]["differs"] is False
    assert call["replay"]["currentIds"] == call["readIds"]
    assert (call["replay"]["addedIds"], call["replay"]["removedIds"]) == ([], [])


async def test_model_calls_page_forwards_and_backwards_in_call_order(api):
    session, *_ = await two_compactions(api.client)
    everything = (await api.client("query($s: ID!) { session(id: $s) { calls { id } } }",
                                   s=session["id"]))["session"]["calls"]
    expected = [c["id"] for c in everything]
    assert len(expected) == 8  # six chat calls and two summarizations, oldest first
    query = ("query($s: ID!, $f: Int, $a: String, $l: Int, $b: String) { session(id: $s) {"
             " modelCalls(first: $f, after: $a, last: $l, before: $b) { edges { cursor"
             f" node {{ id }} }} nodes {{ id }} {PAGE} }} }} }}")

    async def page(**args):
        data = await api.client(query, s=session["id"], **args)
        return data["session"]["modelCalls"]

    seen, after = [], None
    while True:
        p = await page(f=3, a=after)
        assert [e["node"] for e in p["edges"]] == p["nodes"] and p["totalCount"] == 8
        assert p["pageInfo"]["hasPreviousPage"] is (after is not None)
        seen += [n["id"] for n in p["nodes"]]
        if not p["pageInfo"]["hasNextPage"]:
            break
        after = p["pageInfo"]["endCursor"]
    assert seen == expected
    back, before = [], None
    while True:
        p = await page(l=3, b=before)
        back[:0] = [n["id"] for n in p["nodes"]]
        if not p["pageInfo"]["hasPreviousPage"]:
            break
        before = p["pageInfo"]["startCursor"]
    assert back == expected
    newest = (await page(l=3))["edges"]
    middle = await page(f=10, a=newest[0]["cursor"], b=newest[2]["cursor"])
    assert [n["id"] for n in middle["nodes"]] == expected[-2:-1]


async def test_read_by_pages_the_calls_that_read_a_node_with_its_place(api):
    session, _, first, *_ = await two_compactions(api.client)
    query = ("query($n: ID!, $f: Int, $a: String) { node(id: $n) { ... on Message {"
             f" readBy(first: $f, after: $a) {{ edges {{ cursor position node {{ id purpose }} }}"
             f" {PAGE} }} }} }} old: callsReading(nodeId: $n) {{ id }} }}")
    for node_id in (session["rootId"], first["id"]):
        data = await api.client(query, n=node_id, f=1000)
        readers = data["node"]["readBy"]
        assert [e["node"]["id"] for e in readers["edges"]] == [c["id"] for c in data["old"]]
        assert readers["totalCount"] == len(data["old"])
        ledger = Ledger.open(api.db, api.tenant, Limits())
        stored = await ledger.calls.reading(node_id)
        assert [(e["node"]["id"], e["position"]) for e in readers["edges"]] == [
            (r.call.id, r.position) for r in stored]
    assert {e["node"]["purpose"] for e in readers["edges"]} == {"CHAT", "SUMMARIZE"}
    one = (await api.client(query, n=first["id"], f=1))["node"]["readBy"]
    rest = (await api.client(query, n=first["id"], f=10,
                             a=one["pageInfo"]["endCursor"]))["node"]["readBy"]
    assert [e["node"]["id"] for e in one["edges"] + rest["edges"]] == [
        e["node"]["id"] for e in readers["edges"]]


async def test_node_resolves_every_kind_of_id_and_nodes_keeps_the_order_asked(api):
    session = await new_session(api.client, "relay")
    turn = await send(api.client, session["id"], "Hello.")
    ids = [session["id"], turn["reply"]["id"], turn["call"]["id"], "nod_missing", "x"]
    data = await api.client(
        "query($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on Session { title }"
        " ... on Message { role } ... on ModelCall { purpose } } }", ids=ids)
    assert data["nodes"] == [
        {"__typename": "Session", "id": session["id"], "title": "relay"},
        {"__typename": "Message", "id": turn["reply"]["id"], "role": "ASSISTANT"},
        {"__typename": "ModelCall", "id": turn["call"]["id"], "purpose": "CHAT"},
        None, None]
    body = await api.client.post("query($a: ID!, $b: ID!) { a: node(id: $a) { id }"
                                 " b: node(id: $b) { id } }", {"a": session["id"], "b": "x"})
    assert body["data"] == {"a": {"id": session["id"]}, "b": None}
    assert [(e["path"], e["extensions"]["code"]) for e in body["errors"]] == [
        (["b"], "NOT_FOUND")]
    other = await api.other.post("query($a: ID!) { node(id: $a) { id } }", {"a": session["id"]})
    assert other["data"] == {"node": None}  # another tenant's id names nothing
    try:
        await api.client("query($ids: [ID!]!) { nodes(ids: $ids) { id } }",
                         ids=[session["id"]] * 1001)
    except GraphQLErrors as e:
        assert e.codes == ["BAD_INPUT"] and "at most 1000" in e.errors[0]["message"]
    else:
        raise AssertionError("1,001 ids were looked up")
