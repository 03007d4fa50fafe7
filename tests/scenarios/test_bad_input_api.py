"""The bad input catalogue over HTTP: each is a clear coded error and writes nothing."""
import base64
import json

import httpx
import pytest

from tests.scenarios.test_hostile_clients import fragment_bomb

from service.store import Database, Ledger, Limits
from tests.scenarios.conversation import Conversation

STATE = ("query($s: ID!) { session(id: $s) { headId nodeCount updatedAt extraMeta title"
         " branches { tip { id } } calls { id } } }")
ODD_TEXTS = [
    "MATCH (n) DETACH DELETE n",
    "'}) MATCH (n) SET n.pwned = true //",
    "$session_id $tenant {id: $x}",
    "\u0000 nul and \u0007 bell",
    "\u202eright-to-left override\u202c",
    "e\u0301 combining, \ufb01 ligature, \u00a0nbsp",
    "🧪👩🏽‍🔬 emoji with ZWJ",
    "\U0001d54f mathematical double-struck",
    "line\r\nbreaks\ttabs",
    "\\u0041 not an escape",
]


@pytest.fixture
async def world(client, service, neo4j_driver, checked):
    c = await Conversation.start(client, "bad input")
    checked.append(c.id)
    ids = await c.chat(2)
    other = await Conversation.start(client, "another session")
    checked.append(other.id)
    other_ids = await other.chat(1)
    stranger = Ledger.open(Database(neo4j_driver), service.tenant + "-stranger", Limits())
    foreign = await stranger.sessions.create("foreign")
    return dict(c=c, ids=ids, other=other_ids, foreign=foreign)


def nest(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"a": value}
    return value


def catalogue(w):
    sid, ids, other, foreign = w["c"].id, w["ids"], w["other"], w["foreign"]
    append = ("mutation($s: ID!, $c: String!, $p: ID, $k: ID) { appendMessage(sessionId: $s,"
              " role: USER, content: $c, predecessorId: $p, callerId: $k) { id } }")
    send = "mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) { error } }"
    q = lambda query, **v: ("graphql", query, v)  # noqa: E731
    yield "unknown session", "NOT_FOUND", q(send, s="ses_unknown", c="x")
    yield "foreign tenant's session", "NOT_FOUND", q(send, s=foreign.id, c="x")
    yield "foreign tenant's node", "NOT_FOUND", q(append, s=sid, c="x", p=foreign.root_id)
    yield "unknown predecessor", "NOT_FOUND", q(append, s=sid, c="x", p="nod_unknown")
    yield "cross-session predecessor", "BAD_INPUT", q(append, s=sid, c="x", p=other[0])
    yield "cross-session caller", "BAD_INPUT", q(append, s=sid, c="x", k=other[0])
    yield "a session id as predecessor", "NOT_FOUND", q(append, s=sid, c="x", p=sid)
    yield "empty content", "BAD_INPUT", q(send, s=sid, c="")
    yield "blank content", "BAD_INPUT", q(send, s=sid, c=" \n\t")
    yield "oversized content", "BAD_INPUT", q(send, s=sid, c="x" * (1024 * 1024 + 1))
    yield "lone surrogate", "BAD_INPUT", ("raw", json.dumps(
        {"query": send, "variables": {"s": sid, "c": "x"}}).replace('"x"', '"\\ud800"'), None)
    yield "invalid role enum", "BAD_INPUT", q(
        "mutation($s: ID!) { appendMessage(sessionId: $s, role: ADMIN, content: \"x\") { id } }",
        s=sid)
    yield "summary role", "BAD_INPUT", q(
        "mutation($s: ID!) { appendMessage(sessionId: $s, role: SUMMARY, content: \"x\")"
        " { id } }", s=sid)
    yield "rewind to a non-ancestor", "BAD_INPUT", q(
        "mutation($s: ID!, $n: ID!) { rewind(sessionId: $s, nodeId: $n) { id } }",
        s=sid, n=other[0])
    yield "retry a user message", "BAD_INPUT", q(
        "mutation($n: ID!) { retry(nodeId: $n) { error } }", n=ids[0])
    yield "delete a non-tip", "BAD_INPUT", q(
        "mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s, tipId: $t) { id } }",
        s=sid, t=ids[0])
    yield "record a call reading another session", "BAD_INPUT", q(
        "mutation($s: ID!, $r: [ID!]!) { recordCall(sessionId: $s, readIds: $r, model: \"m\")"
        " { id } }", s=sid, r=[ids[0], other[0]])
    yield "reserved meta key", "BAD_INPUT", q(
        "mutation($s: ID!) { updateSession(sessionId: $s, extraMeta: {_last_summary_id: \"x\"})"
        " { id } }", s=sid)
    yield "negative keepRecentTokens", "BAD_INPUT", q(
        "mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: -5) { status } }", s=sid)
    yield "a forged page cursor", "BAD_INPUT", q(
        "query { sessions(after: \"bm90IGEgY3Vyc29y\") { nodes { id } } }")
    yield "deeply nested query", "BAD_INPUT", q(
        "query($n: ID!) { node(id: $n) { ... on Message { " + "children { " * 20 + "id"
        + " }" * 20 + " } } }",
        n=ids[0])
    yield "too many aliases", "BAD_INPUT", q(
        "query { " + " ".join(f"a{i}: sessions {{ nodes {{ id }} }}" for i in range(40)) + " }")
    yield "huge query", "BAD_INPUT", q(
        "query { sessions { nodes { " + " ".join(["id"] * 5000) + " } } }")
    yield "unknown field", "BAD_INPUT", q("query { sessions { nodes { password } } }")
    yield "syntax error", "BAD_INPUT", q("mutation { sendMessage(")
    update = "mutation($s: ID!, $m: JSON) { updateSession(sessionId: $s, extraMeta: $m) { id } }"
    record = ("mutation($s: ID!, $r: [ID!]!, $m: String!) { recordCall(sessionId: $s,"
              " readIds: $r, model: $m) { id } }")
    yield "a fragment bomb (40 levels, each spreading the next twice)", "BAD_INPUT", q(
        fragment_bomb(40))
    yield "extraMeta a number", "BAD_INPUT", q(update, s=sid, m=5)
    yield "extraMeta true", "BAD_INPUT", q(update, s=sid, m=True)
    yield "extraMeta nested 200 deep", "BAD_INPUT", q(update, s=sid, m=nest(200))
    yield "metadata nested 200 deep", "BAD_INPUT", q(
        "mutation($s: ID!, $m: JSON) { appendMessage(sessionId: $s, role: USER, content: \"x\","
        " metadata: $m) { id } }", s=sid, m=nest(200))
    yield "a cursor holding nested JSON", "BAD_INPUT", q(
        "query($a: String) { sessions(after: $a) { nodes { id } } }",
        a=base64.urlsafe_b64encode(b"[" * 900 + b"]" * 900).decode())
    yield "a missing variable", "BAD_INPUT", q(send, c="x")
    yield "a variable of the wrong type", "BAD_INPUT", q(send, s=[1, 2], c="x")
    yield "lone surrogate in recordCall's model", "BAD_INPUT", ("raw", json.dumps(
        {"query": record, "variables": {"s": sid, "r": [ids[0]], "m": "X"}}).replace(
        '"X"', '"\\ud800"'), None)
    yield "a 2 MiB model name", "BAD_INPUT", q(record, s=sid, r=[ids[0]], m="m" * (2 << 20))
    yield "duplicate read ids", "BAD_INPUT", q(record, s=sid, r=[ids[0], ids[1], ids[0]], m="m")
    yield "more read ids than the cap", "BAD_INPUT", q(
        record, s=sid, r=[f"nod_{i}" for i in range(10_001)], m="m")
    yield "an empty predecessor id", "BAD_INPUT", q(append, s=sid, c="x", p="")
    yield "an empty caller id", "BAD_INPUT", q(append, s=sid, c="x", k="")
    yield "an empty head id to compact", "BAD_INPUT", q(
        "mutation($s: ID!) { compact(sessionId: $s, headId: \"\") { status } }", s=sid)
    yield "a query document over 64 KiB", "HTTP_4XX", ("graphql", "query { sessions { nodes"
                                                        " { id } } } #" + "x" * 70_000, {})
    yield "JSON body nested 1,000 deep", "HTTP_4XX", ("raw", '{"query": "{ sessions { nodes'
                                                      ' { id } } }", "variables": {"v": '
                                                      + "[" * 1000 + "]" * 1000 + "}}", None)
    yield "a body over the request limit", "HTTP_4XX", q(send, s=sid, c="x" * (9 << 20))
    yield "mutation over GET", "HTTP_4XX", ("get", send, {"s": sid, "c": "x"})
    yield "malformed JSON", "HTTP_4XX", ("raw", '{"query": "query { sessions', None)
    yield "wrong content type", "HTTP_4XX", ("text", send, None)


async def attempt(url, kind, body, variables):
    async with httpx.AsyncClient(timeout=60) as http:
        if kind == "graphql":
            return await http.post(f"{url}/graphql", json={"query": body, "variables": variables})
        if kind == "raw":
            return await http.post(f"{url}/graphql", content=body,
                                   headers={"Content-Type": "application/json"})
        if kind == "text":
            return await http.post(f"{url}/graphql", content=body,
                                   headers={"Content-Type": "text/plain"})
        return await http.get(f"{url}/graphql", params={"query": body,
                                                       "variables": json.dumps(variables)})


async def test_the_bad_input_catalogue(service, client, world, capsys):
    sid = world["c"].id
    before = await client(STATE, s=sid)
    tried = 0
    for label, code, (kind, body, variables) in catalogue(world):
        response = await attempt(service.url, kind, body, variables)
        if code == "HTTP_4XX":
            assert 400 <= response.status_code < 500, (label, response.text[:300])
            code = "BAD_INPUT"
        errors = response.json().get("errors")
        assert errors, (label, response.text[:300])
        assert errors[0]["extensions"]["code"] == code, (label, errors)
        assert errors[0]["message"] and "Traceback" not in response.text, label
        assert await client(STATE, s=sid) == before, f"{label} wrote something"
        tried += 1
    with capsys.disabled():
        print(f"\nbad inputs tried over HTTP: {tried}")
    assert "Traceback" not in service.output, "a client mistake was logged with a traceback"
    assert tried >= 46


async def test_odd_text_is_stored_and_returned_byte_for_byte(client, world):
    c = world["c"]
    for text in ODD_TEXTS:
        node = (await client("mutation($s: ID!, $c: String!) { appendMessage(sessionId: $s,"
                             " role: USER, content: $c) { id content } }",
                             s=c.id, c=text))["appendMessage"]
        assert node["content"] == text
        read = await client("query($n: ID!) { node(id: $n) { ... on Message { content } } }", n=node["id"])
        assert read["node"]["content"].encode("utf-8") == text.encode("utf-8")
