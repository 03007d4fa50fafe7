"""Labels on messages over the GraphQL API (issue 25): data about a node, held beside it (the
session's LABELED relationship), so the node never changes; announced; carried by a backup
and checked by `ctxdag check`."""
from service.store import Ledger, Limits
from service.store.backup import VERSION, export_session, import_session
from service.store.invariants import violations
from tests.integration.helpers import DELETE_SESSION, run_cypher

MESSAGE = ("id role content tokens seq depth predecessorId createdAt metadata deleted"
           " blocks { __typename } label")
LABEL = f"mutation($n: ID!, $t: String!) {{ label(nodeId: $n, text: $t) {{ {MESSAGE} }} }}"
UNLABEL = f"mutation($n: ID!) {{ unlabel(nodeId: $n) {{ {MESSAGE} }} }}"
STATE = """query($s: ID!, $n: ID!) {
  session(id: $s) { lastEventSeq nodeCount render { nodeIds tokens }
                    graph { nodes { id label } } }
  node(id: $n) { ... on Message { label } }
}"""
EVENTS = """subscription($s: ID!, $a: Int) { sessionEvents(sessionId: $s, after: $a) {
  seq type ... on NodeLabeled { nodeId label } ... on NodeUnlabeled { nodeId } } }"""


async def new_conversation(client):
    sid = (await client("mutation { createSession(title: \"labels\", systemPrompt: \"Terse.\")"
                        " { id } }"))["createSession"]["id"]
    turn = (await client("mutation($s: ID!) { sendMessage(sessionId: $s, content: \"Hello.\")"
                         " { userNode { id } reply { id } } }", s=sid))["sendMessage"]
    return sid, turn["userNode"]["id"], turn["reply"]["id"]


async def state(client, sid, node_id):
    data = await client(STATE, s=sid, n=node_id)
    session = data["session"]
    labels = {row["id"]: row["label"] for row in session.pop("graph")["nodes"]}
    return session, data["node"]["label"], labels


async def test_a_label_is_set_replaced_and_removed_and_the_node_never_changes(api):
    client = api.client
    sid, user, reply = await new_conversation(client)
    before, _, _ = await state(client, sid, user)
    node = (await client(f"query($n: ID!) {{ node(id: $n) {{ ... on Message {{ {MESSAGE} }} }} }}",
                         n=user))["node"]
    assert node["label"] is None

    labeled = (await client(LABEL, n=user, t="the greeting"))["label"]
    assert labeled == {**node, "label": "the greeting"}
    session, label, graph = await state(client, sid, user)
    assert (label, graph[user], graph[reply]) == ("the greeting", "the greeting", None)
    assert session == {**before, "lastEventSeq": before["lastEventSeq"] + 1}  # render alike

    replaced = (await client(LABEL, n=user, t="hello, again"))["label"]
    assert replaced["label"] == "hello, again"
    unlabeled = (await client(UNLABEL, n=user))["unlabel"]
    assert unlabeled == node
    session, label, graph = await state(client, sid, user)
    assert (label, graph[user]) == (None, None)
    assert session["lastEventSeq"] == before["lastEventSeq"] + 3

    # Without a label, unlabel writes nothing, announces nothing.
    assert (await client(UNLABEL, n=user))["unlabel"] == node
    assert (await state(client, sid, user))[0] == session

    events = await client.subscribe(EVENTS, {"s": sid, "a": before["lastEventSeq"]}, 3)
    assert [e["data"]["sessionEvents"] for e in events] == [
        {"seq": before["lastEventSeq"] + 1, "type": "NODE_LABELED", "nodeId": user,
         "label": "the greeting"},
        {"seq": before["lastEventSeq"] + 2, "type": "NODE_LABELED", "nodeId": user,
         "label": "hello, again"},
        {"seq": before["lastEventSeq"] + 3, "type": "NODE_UNLABELED", "nodeId": user}]
    assert await violations(api.db, api.tenant, sid, Limits()) == []


async def test_the_labels_of_a_request_are_read_in_one_round_trip(api):
    client = api.client
    sid, user, reply = await new_conversation(client)
    await client(LABEL, n=user, t="asked")
    await client(LABEL, n=reply, t="answered")
    api.db.round_trips.by_name.clear()
    session = (await client("query($s: ID!) { session(id: $s) { graph { nodes { id label } }"
                            " render { nodes { id label } } } }", s=sid))["session"]
    assert api.db.round_trips.by_name.get("label_get_many") == 1
    labels = {row["id"]: row["label"] for row in session["graph"]["nodes"]}
    assert labels == {**{n["id"]: None for n in session["render"]["nodes"]},
                      user: "asked", reply: "answered"}
    assert {n["id"]: n["label"] for n in session["render"]["nodes"]} == labels


async def test_bad_labels_are_refused_and_write_nothing(api):
    client = api.client
    sid, user, reply = await new_conversation(client)
    await client(LABEL, n=reply, t="kept")
    others_sid, others_user, _ = await new_conversation(api.other)
    before = await state(client, sid, reply)
    cases = {
        "empty": (reply, "", "BAD_INPUT", "label must be non-blank text"),
        "blank": (reply, "   ", "BAD_INPUT", "label must be non-blank text"),
        "too long": (reply, "x" * 101, "BAD_INPUT", "label is 101 characters; the limit is 100"),
        "two lines": (reply, "one\ntwo", "BAD_INPUT", "label must be one line"),
        "unknown node": ("nod_missing", "a", "NOT_FOUND", "nod_missing"),
        "another tenant's node": (others_user, "a", "NOT_FOUND", others_user),
    }
    for case, (node_id, text, code, message) in cases.items():
        errors = await client.errors(LABEL, n=node_id, t=text)
        assert errors[0]["extensions"]["code"] == code, case
        assert message in errors[0]["message"], (case, errors[0]["message"])
        assert await state(client, sid, reply) == before, case
    errors = await client.errors(UNLABEL, n=others_user)
    assert errors[0]["extensions"]["code"] == "NOT_FOUND"
    assert (await api.other(STATE, s=others_sid, n=others_user))["node"]["label"] is None

    # A node deleted with its branch keeps its label, and takes no new one.
    await client("mutation($n: ID!) { retry(nodeId: $n) { reply { id } } }", n=reply)
    await client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s, tipId: $t)"
                 " { headId } }", s=sid, t=reply)
    for query, variables in ((LABEL, {"n": reply, "t": "new"}), (UNLABEL, {"n": reply})):
        errors = await client.errors(query, **variables)
        assert errors[0]["extensions"]["code"] == "BAD_INPUT"
        assert f"node {reply} was deleted with its branch" in errors[0]["message"]
    assert (await client("query($n: ID!) { node(id: $n) { ... on Message { label deleted } } }",
                         n=reply))["node"] == {"label": "kept", "deleted": True}


async def test_labels_travel_through_export_and_import_and_check_names_a_bad_one(api):
    client = api.client
    sid, user, reply = await new_conversation(client)
    await client(LABEL, n=reply, t="the answer")
    document = await export_session(api.db, api.tenant, sid, Limits())
    assert document["version"] == VERSION
    assert [(entry["node_id"], entry["properties"]["text"]) for entry in document["labels"]] \
        == [(reply, "the answer")]
    assert set(document["labels"][0]["properties"]) == {"text", "labeled_at"}

    await run_cypher(api.db, DELETE_SESSION, sid=sid)
    assert await import_session(api.db, api.tenant, document, Limits()) == sid
    _, label, graph = await state(client, sid, reply)
    assert (label, graph[reply], graph[user]) == ("the answer", "the answer", None)
    again = await export_session(api.db, api.tenant, sid, Limits())
    assert again["labels"] == document["labels"]

    # A version 2 document (before labels) still imports, without any.
    await run_cypher(api.db, DELETE_SESSION, sid=sid)
    version_2 = {**document, "version": 2,
                 "nodes": [{k: v for k, v in n.items() if k != "carries_over"}
                           for n in document["nodes"]]}
    del version_2["labels"], version_2["branch_names"], version_2["pins"]
    assert await import_session(api.db, api.tenant, version_2, Limits()) == sid
    assert (await state(client, sid, reply))[1] is None

    # A label only a hand edit could store is named by the check.
    await run_cypher(api.db, "MATCH (s:Session {id: $sid}), (n:Node {id: $n})"
                             " CREATE (s)-[:LABELED {text: '', labeled_at: 1}]->(n)",
                     sid=sid, n=user)
    ledger = Ledger.open(api.db, api.tenant, Limits())
    assert await ledger.violations(sid) == [
        f"property: label of node '{user}': text must be non-blank text",
        f"property: label of node '{user}': labeled_at must be a datetime with an offset or zone"]
