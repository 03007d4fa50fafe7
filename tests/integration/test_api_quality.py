"""API quality bars: constant round trips, coded errors, limits, tenants, live events."""
import asyncio

import pytest

from service.store import Ledger, Limits
from tests.api_client import GraphQLErrors
from tests.integration.test_api import new_session, send

SESSION_VIEW = """query($id: ID!) { session(id: $id) {
  id headId
  graph { nodes { id role predecessorId callerId isHead coversIds supersededSummary } }
  branches { tip { id content children { id } coveredBy { id isActive } } isHead length }
  render { headId nodeIds nodes { id role content
    readBy(first: 3) { totalCount edges { position node { id } } } } summaryId tokens }
  activeSummary { id coversIds }
  calls { id }
  modelCalls(last: 5) { totalCount pageInfo { hasPreviousPage }
    edges { cursor node { id readIds reads { id } replay { differs currentIds removed { id } } } } }
} }"""


async def grow(ledger, session_id, turns):
    for i in range(turns):
        await ledger.head.append_message(session_id, "user" if i % 2 == 0 else "assistant",
                                         f"Turn {i}. ".ljust(60, "x"))


async def round_trips(api, query, **variables):
    before = dict(api.db.round_trips.by_name)
    await api.client(query, **variables)
    return {k: v - before.get(k, 0) for k, v in api.db.round_trips.by_name.items()
            if v != before.get(k, 0)}


async def test_round_trips_stay_constant_as_the_session_grows(api):
    ledger = Ledger.open(api.db, api.tenant, Limits())
    small = await ledger.sessions.create("small")
    large = await ledger.sessions.create("large")
    await grow(ledger, small.id, 10)
    await grow(ledger, large.id, 1000)
    for session in (small, large):  # a fork and a compaction on each
        nodes = await ledger.branches.list(session.id)
        await api.client("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 60) "
                         "{ status } }", s=session.id)
        await send(api.client, session.id, "A question.")
        tip = nodes[0].tip
        await ledger.head.append_message(session.id, "assistant", "a fork",
                                         predecessor_id=tip.predecessor_id)
    small_trips = await round_trips(api, SESSION_VIEW, id=small.id)
    large_trips = await round_trips(api, SESSION_VIEW, id=large.id)
    assert small_trips == large_trips
    # One statement per kind of record, except the renders of HEAD and of the replayed
    # calls' heads, and the two windows of calls (`calls` and `modelCalls(last: 5)`).
    assert set(large_trips.values()) == {1, 2} and sum(large_trips.values()) <= 14, large_trips


async def test_listing_sessions_with_their_views_is_not_n_plus_1(api):
    client = api.other
    for i in range(4):
        session = await new_session(client, f"list {i}")
        await send(client, session["id"], "Hi.")
    query = """query { sessions(first: 4) { nodes { id head { id } root { id }
      branches { tip { id } } render { nodeIds } graph { nodes { id } } calls { id }
      modelCalls(first: 2) { totalCount nodes { id readIds } } } } }"""
    before = api.db.round_trips.total
    data = await client(query)
    assert len(data["sessions"]["nodes"]) == 4
    assert api.db.round_trips.total - before <= 8, api.db.round_trips.by_name


async def test_error_codes_are_stable_and_readable(api):
    client = api.client
    session = await new_session(client)
    sid = session["id"]
    cases = [
        ("query { session(id: \"ses_nope\") { id } }", "NOT_FOUND", "ses_nope"),
        ("query { node(id: \"nod_nope\") { id } }", "NOT_FOUND", "nod_nope"),
        ("query { call(id: \"cal_nope\") { id } }", "NOT_FOUND", "cal_nope"),
        (f"mutation {{ sendMessage(sessionId: \"{sid}\", content: \"  \") {{ error }} }}",
         "BAD_INPUT", "empty"),
        (f"mutation {{ appendMessage(sessionId: \"{sid}\", role: WIZARD, content: \"x\") "
         "{ id } }", "BAD_INPUT", "WIZARD"),
        (f"mutation {{ appendMessage(sessionId: \"{sid}\", role: SUMMARY, content: \"x\") "
         "{ id } }", "BAD_INPUT", "compaction"),
        (f"mutation {{ rewind(sessionId: \"{sid}\", nodeId: \"nod_nope\") {{ id }} }}",
         "NOT_FOUND", "nod_nope"),
        (f"mutation {{ deleteBranch(sessionId: \"{sid}\", tipId: \"{session['rootId']}\") "
         "{ id } }", "BAD_INPUT", "ROOT"),
        ("query { sessions(first: 0) { nodes { id } } }", "BAD_INPUT", "first"),
        ("query { session(id: 1) { nope } }", "BAD_INPUT", "nope"),
        ("query {", "BAD_INPUT", "Syntax"),
    ]
    for query, code, fragment in cases:
        errors = await client.errors(query)
        assert errors[0]["extensions"]["code"] == code, (query, errors)
        assert fragment.lower() in errors[0]["message"].lower(), (query, errors)
        assert "Traceback" not in str(errors)


async def test_a_repeated_delete_is_a_conflict(api):
    client = api.client
    session = await new_session(client)
    turn = await send(client, session["id"], "Hi.")
    mutation = ("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s, tipId: $t) { id } }")
    await client(mutation, s=session["id"], t=turn["reply"]["id"])
    with pytest.raises(GraphQLErrors) as caught:
        await client(mutation, s=session["id"], t=turn["reply"]["id"])
    assert caught.value.codes == ["CONFLICT"]


async def test_unexpected_errors_are_masked(api, monkeypatch):
    async def explode(self, *args, **kwargs):
        raise RuntimeError("secret internals at /srv/db")

    monkeypatch.setattr("service.turns.service.Turns.send_message", explode)
    session = await new_session(api.client)
    errors = await api.client.errors(
        "mutation($s: ID!) { sendMessage(sessionId: $s, content: \"hi\") { error } }",
        s=session["id"])
    assert errors[0]["message"] == "Unexpected error."
    assert errors[0]["extensions"] == {"code": "INTERNAL"}
    assert "secret" not in str(errors)


async def test_depth_alias_and_size_limits(api):
    deep = "query { node(id: \"x\") { " + "children { " * 15 + "id" + " }" * 15 + " } }"
    aliases = "query { " + " ".join(f"a{i}: node(id: \"x\") {{ id }}" for i in range(30)) + " }"
    huge = "query { node(id: \"x\") { " + " ".join(["id"] * 3000) + " } }"
    for query in (deep, aliases, huge):
        errors = await api.client.errors(query)
        assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors


async def test_tokens_map_to_tenants_and_tenants_see_nothing_of_each_other(api):
    mine = await new_session(api.client, "tenant A's")
    turn = await send(api.client, mine["id"], "Private.")
    errors = await api.anonymous.errors("query { sessions { nodes { id } } }")
    assert errors[0]["extensions"]["code"] == "UNAUTHENTICATED"
    from tests.api_client import Client
    forged = Client(api.url, "not-a-token")
    assert (await forged.errors("query { sessions { nodes { id } } }"))[0][
        "extensions"]["code"] == "UNAUTHENTICATED"
    other = api.other
    for query, variables in [
        ("query($i: ID!) { session(id: $i) { id } }", {"i": mine["id"]}),
        ("query($i: ID!) { node(id: $i) { id } }", {"i": turn["userNode"]["id"]}),
        ("query($i: ID!) { call(id: $i) { id } }", {"i": turn["call"]["id"]}),
        ("query($i: ID!) { callsReading(nodeId: $i) { id } }", {"i": mine["rootId"]}),
        ("mutation($i: ID!) { sendMessage(sessionId: $i, content: \"x\") { error } }",
         {"i": mine["id"]}),
        ("mutation($i: ID!) { retry(nodeId: $i) { error } }", {"i": turn["reply"]["id"]}),
    ]:
        errors = await other.errors(query, **variables)
        assert errors[0]["extensions"]["code"] == "NOT_FOUND", (query, errors)
    listed = await other("query { sessions(first: 100) { nodes { id } } }")
    assert mine["id"] not in {s["id"] for s in listed["sessions"]["nodes"]}


async def test_session_events_are_delivered_over_a_websocket(api):
    client = api.client
    session = await new_session(client)
    for i in range(4):
        await send(client, session["id"], f"Question {i}. ".ljust(100, "x"))
    ready = asyncio.Event()
    query = """subscription($s: ID!) { sessionEvents(sessionId: $s) {
      type sessionId
      ... on NodeAppended { nodeId role }
      ... on HeadMoved { previousHeadId headId }
      ... on CompactionStarted { trigger }
      ... on CompactionFinished { summaryId coveredCount tokensBefore tokensAfter tokenDelta }
    } }"""
    listener = asyncio.create_task(client.subscribe(query, {"s": session["id"]}, 6, ready))
    await ready.wait()
    compacted = (await client("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 60)"
                              " { summary { id } } }", s=session["id"]))["compact"]
    turn = await send(client, session["id"], "After compaction.")
    events = [p["data"]["sessionEvents"] for p in await listener]
    assert [e["type"] for e in events] == [
        "COMPACTION_STARTED", "COMPACTION_FINISHED",
        "NODE_APPENDED", "HEAD_MOVED", "NODE_APPENDED", "HEAD_MOVED"]
    assert events[1]["summaryId"] == compacted["summary"]["id"]
    assert events[1]["tokenDelta"] == events[1]["tokensAfter"] - events[1]["tokensBefore"] < 0
    assert events[2]["nodeId"] == turn["userNode"]["id"] and events[2]["role"] == "USER"
    assert events[5]["headId"] == turn["reply"]["id"]


async def test_a_browser_websocket_authenticates_in_connection_init(api):
    """Browsers cannot set headers on a websocket: the token rides in connection_init."""
    import json

    import websockets

    session = await new_session(api.client)
    url = api.url.replace("http://", "ws://") + "/graphql"

    async def connect(payload):
        ws = await websockets.connect(url, subprotocols=["graphql-transport-ws"])
        await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
        return ws

    async with await connect({"Authorization": f"Bearer {api.client.token}"}) as ws:
        assert json.loads(await ws.recv())["type"] == "connection_ack"
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {
            "query": "query($s: ID!) { session(id: $s) { id } }",
            "variables": {"s": session["id"]}}}))
        assert json.loads(await ws.recv())["payload"]["data"] == {
            "session": {"id": session["id"]}}
    async with await connect({"Authorization": "Bearer not-a-token"}) as ws:
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd.code == 4403
    async with await connect({}) as ws:  # no token anywhere: operations are refused
        assert json.loads(await ws.recv())["type"] == "connection_ack"
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {
            "query": "query($s: ID!) { session(id: $s) { id } }",
            "variables": {"s": session["id"]}}}))
        answer = json.loads(await ws.recv())
        assert answer["payload"]["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


async def test_a_subscription_sent_as_a_plain_request_says_where_to_subscribe(api):
    body = await api.client.post("subscription { sessionEvents(sessionId: \"x\") { type } }")
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT", body
    assert "websocket" in body["errors"][0]["message"]


async def test_a_subscription_to_another_tenants_session_is_refused(api):
    mine = await new_session(api.client)
    payloads = await api.other.subscribe(
        "subscription($s: ID!) { sessionEvents(sessionId: $s) { type } }",
        {"s": mine["id"]}, 1)
    assert payloads[0]["errors"][0]["extensions"]["code"] == "NOT_FOUND", payloads
    assert payloads[0]["errors"][0]["message"] == f"session '{mine['id']}' does not exist"


async def test_automatic_persisted_queries_follow_apollos_protocol(api):
    """Apollo's link sends the hash alone first; on PERSISTED_QUERY_NOT_FOUND it sends hash
    and query, and from then on the hash alone runs the query (POST or GET)."""
    import hashlib
    import json

    import httpx

    session = (await new_session(api.client, title="apq"))["id"]
    query = "query Title($id: ID!) { session(id: $id) { id title } }"
    digest = hashlib.sha256(query.encode()).hexdigest()
    persisted = {"persistedQuery": {"version": 1, "sha256Hash": digest}}
    variables = {"id": session}
    async with httpx.AsyncClient(base_url=api.url, headers=api.client.headers,
                                 timeout=30) as http:
        miss = await http.post("/graphql", json={"variables": variables,
                                                 "extensions": persisted})
        assert miss.status_code == 200
        (error,) = miss.json()["errors"]
        assert error["message"] == "PersistedQueryNotFound"
        assert error["extensions"]["code"] == "PERSISTED_QUERY_NOT_FOUND"

        both = await http.post("/graphql", json={"query": query, "variables": variables,
                                                 "extensions": persisted})
        assert both.json()["data"]["session"]["id"] == session
        by_hash = await http.post("/graphql", json={"variables": variables,
                                                    "extensions": persisted})
        assert by_hash.json() == both.json()
        by_get = await http.get("/graphql", headers={"Accept": "application/json"}, params={
            "variables": json.dumps(variables), "extensions": json.dumps(persisted)})
        assert by_get.json() == both.json()

        wrong = await http.post("/graphql", json={
            "query": query.replace("title", "headId"), "variables": variables,
            "extensions": persisted})
        assert wrong.status_code == 400
        assert wrong.json()["errors"][0]["extensions"]["code"] == "BAD_INPUT"
        old = await http.post("/graphql", json={
            "query": query, "variables": variables,
            "extensions": {"persistedQuery": {"version": 2, "sha256Hash": digest}}})
        assert old.json()["errors"][0]["extensions"]["code"] == "PERSISTED_QUERY_NOT_SUPPORTED"


async def test_one_missing_id_in_an_aliased_query_nulls_only_its_field(api):
    """Root lookups are nullable: a missing id is a NOT_FOUND error at its path, and the
    other aliases' data stands."""
    session = (await new_session(api.client, title="aliases"))["id"]
    body = await api.client.post(
        "query($a: ID!, $b: ID!) { found: session(id: $a) { id } missing: session(id: $b) { id }"
        " node: node(id: $b) { id } call: call(id: $b) { id } }",
        {"a": session, "b": "ses_missing"})
    assert body["data"] == {"found": {"id": session}, "missing": None, "node": None,
                            "call": None}
    by_path = {tuple(e["path"]): e["extensions"]["code"] for e in body["errors"]}
    assert by_path == {("missing",): "NOT_FOUND", ("node",): "NOT_FOUND",
                       ("call",): "NOT_FOUND"}
