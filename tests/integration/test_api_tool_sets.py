"""Tool sets as session data (docs/guides/tool-sets.md), over GraphQL on the real store and the
Anthropic SDK against the local stub: a set stored with setTools reaches every request the
service sends (chat, count_tokens, summarizer) and every request a client asks for, per
branch, unless a call names its own tools; replay and callDiff show the change; a bad set
is BAD_INPUT and writes nothing."""
from __future__ import annotations

import json

from tests.integration.test_api import new_session
from tests.integration.test_api_agent import TOOLS, send, submit
from tests.integration.test_api_tool_requests import stub_api, stored  # noqa: F401 (fixture)

LOOKUP = TOOLS[0]
SPELL = {"name": "spell", "description": "Spells a word.",
         "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}}}
OTHER = {"name": "other", "inputSchema": {"type": "object"}}
SET_TOOLS = ("mutation($s: ID!, $t: [ToolInput!]!, $c: ToolChoiceInput, $h: ID) {"
             " setTools(sessionId: $s, tools: $t, toolChoice: $c, headId: $h) {"
             " version headId tools toolChoice sha256 } }")
TOOL_SET = ("query($s: ID!, $h: ID) { session(id: $s) { toolSet(headId: $h) { version } "
            " toolSetHistory { version headId sha256 } } }")
CALL = ("query($c: ID!) { call(id: $c) { toolsSha256 tools replay { tools } } }")
DIFF = ("query($a: ID!, $b: ID!) { callDiff(first: $a, second: $b) { toolsChanged"
        " toolsDiff { added removed changed } } }")
RETRY = "mutation($n: ID!) { retry(nodeId: $n) { reply { id } call { id } error } }"
COMPACT = ("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 1) { status } }")
REQUEST = ("query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) {"
           " request(format: ANTHROPIC_MESSAGES, model: \"claude-x\", maxTokens: 100) } } }")


def names(body) -> list[str]:
    return [t["name"] for t in body.get("tools") or ()]


async def set_tools(client, session_id, tools, choice=None, head=None):
    return (await client(SET_TOOLS, s=session_id, t=tools, c=choice, h=head))["setTools"]


async def in_force(client, session_id, head=None):
    return (await client(TOOL_SET, s=session_id, h=head))["session"]


async def test_a_session_tool_set_reaches_every_request_per_branch_unless_a_call_names_tools(
        stub_api, stub):
    from tests.provider_requests import assert_valid_anthropic
    from tests.stubs.anthropic_stub import COUNT_TOKENS_PATH, MESSAGES_PATH, reply, tool_call

    client = stub_api.client
    session = await new_session(client)
    sid = session["id"]
    first = await set_tools(client, sid, [LOOKUP])
    assert first["version"] == 1 and first["headId"] is None and len(first["sha256"]) == 64
    assert [t["name"] for t in first["tools"]] == ["lookup"]

    # The agent loop without tools on any call: the set is offered to each.
    stub.enqueue(tool_call(("toolu_t1", "lookup", {"word": "ledger"}), text="Looking."),
                 reply("A ledger is a book of accounts."))
    turn = await send(client, sid, "What is a ledger?")
    assert turn["openToolUseIds"] == ["toolu_t1"]
    answered = await submit(client, sid, [{"toolUseId": "toolu_t1", "content": "accounts"}],
                            tools=None)
    assert answered["error"] is None

    # Mid-session, another set: the next turn is offered it, with its tool choice.
    second = await set_tools(client, sid, [LOOKUP, SPELL], {"mode": "AUTO"})
    assert second["version"] == 2 and second["toolChoice"] == {"mode": "auto", "name": None}
    stub.enqueue(reply("Noted."))
    noted = await send(client, sid, "Note it.")
    chats = [r.body for r in stub.requests_to(MESSAGES_PATH)]
    assert [names(b) for b in chats] == [["lookup"], ["lookup"], ["lookup", "spell"]]
    assert chats[2]["tool_choice"] == {"type": "auto"}
    counts = [r.body for r in stub.requests_to(COUNT_TOKENS_PATH)]
    assert [names(b) for b in counts] == [["lookup"], ["lookup"], ["lookup", "spell"]]
    for body in chats:
        assert_valid_anthropic(body)

    # Provenance names the set by hash; replay shows it; callDiff shows the change.
    before = (await client(CALL, c=answered["call"]["id"]))["call"]
    after = (await client(CALL, c=noted["call"]["id"]))["call"]
    assert (before["toolsSha256"], after["toolsSha256"]) == (first["sha256"], second["sha256"])
    assert [t["name"] for t in after["replay"]["tools"]] == ["lookup", "spell"]
    diff = (await client(DIFF, a=answered["call"]["id"], b=noted["call"]["id"]))["callDiff"]
    assert diff["toolsChanged"] is True
    assert diff["toolsDiff"] == {"added": ["spell"], "removed": [], "changed": []}

    # A branch's set: anchored at HEAD, it applies there and after; a retry below it forks
    # a chain it is not on, which the session's set applies to.
    tip = noted["reply"]["id"]
    branch = await set_tools(client, sid, [SPELL], head=tip)
    assert branch["version"] == 3 and branch["headId"] == tip
    stub.enqueue(reply("S-P-E-L-L."))
    spelled = await send(client, sid, "Spell it.")
    assert (await in_force(client, sid))["toolSet"]["version"] == 3
    stub.enqueue(reply("Noted again."))
    retried = (await client(RETRY, n=tip))["retry"]
    assert retried["error"] is None
    chats = [r.body for r in stub.requests_to(MESSAGES_PATH)]
    assert [names(b) for b in chats[3:]] == [["spell"], ["lookup", "spell"]]
    assert (await in_force(client, sid))["toolSet"]["version"] == 2  # HEAD left the branch
    spelled_at = await in_force(client, sid, spelled["reply"]["id"])
    assert spelled_at["toolSet"]["version"] == 3
    assert [v["version"] for v in spelled_at["toolSetHistory"]] == [1, 2, 3]
    assert [v["headId"] for v in spelled_at["toolSetHistory"]] == [None, None, tip]

    # A call that names its tools is offered those (and its call records them).
    stub.enqueue(reply("Other."))
    override = await send(client, sid, "Use the other.", tools=[OTHER])
    assert names(stub.requests_to(MESSAGES_PATH)[-1].body) == ["other"]
    assert [t["name"] for t in (await client(CALL, c=override["call"]["id"]))[
        "call"]["tools"]] == ["other"]

    # A request a client asks for without tools is offered the set at its head.
    asked = (await client(REQUEST, s=sid, h=spelled["reply"]["id"]))["session"]["render"]
    assert names(asked["request"]) == ["spell"]
    assert_valid_anthropic(asked["request"])
    asked = (await client(REQUEST, s=sid, h=None))["session"]["render"]
    assert names(asked["request"]) == ["lookup", "spell"]

    # Over the budget: the count, the summarizer and the chat all carry the set; so does
    # a compaction asked for by hand (no call hands it tools).
    stub.reset()
    stub.enqueue_count_tokens(900)
    stub.enqueue(reply("## Goal\n- define ledger"), reply("Bye."))
    compacted = await send(client, sid, "Bye.")
    assert compacted["error"] is None and compacted["reply"]["content"] == "Bye."
    sent = [r.body for r in stub.requests_to(MESSAGES_PATH)]
    assert [names(b) for b in sent] == [["lookup", "spell"]] * 2
    assert "tool_use" in json.dumps(sent[0]["messages"])  # the summarizer read the loop
    assert [names(r.body) for r in stub.requests_to(COUNT_TOKENS_PATH)] == [
        ["lookup", "spell"]]
    await set_tools(client, sid, [LOOKUP])
    stub.enqueue(reply("One."), reply("Two."))
    await send(client, sid, "One more.")
    await send(client, sid, "And another.")
    stub.reset()
    stub.enqueue(reply("## Goal\n- bye"))
    assert (await client(COMPACT, s=sid))["compact"]["status"] == "COMPACTED"
    (summarizer,) = [r.body for r in stub.requests_to(MESSAGES_PATH)]
    assert names(summarizer) == ["lookup"]
    for body in sent + [summarizer]:
        assert_valid_anthropic(body)


async def test_clearing_the_set_offers_no_tools(stub_api, stub):
    from tests.stubs.anthropic_stub import MESSAGES_PATH, reply

    client = stub_api.client
    sid = (await new_session(client))["id"]
    await set_tools(client, sid, [LOOKUP])
    cleared = await set_tools(client, sid, [])
    assert cleared["version"] == 2 and cleared["tools"] == [] and cleared["sha256"] is None
    stub.enqueue(reply("Hi."))
    await send(client, sid, "Hello.")
    assert "tools" not in stub.requests_to(MESSAGES_PATH)[-1].body


async def test_a_bad_tool_set_is_bad_input_and_writes_nothing(api):
    client = api.client
    sid = (await new_session(client))["id"]
    await set_tools(client, sid, [LOOKUP])
    other = (await new_session(client))["id"]
    other_head = (await in_force(client, other))  # (no set: null)
    assert other_head["toolSet"] is None and other_head["toolSetHistory"] == []
    foreign = (await client("query($s: ID!) { session(id: $s) { headId } }", s=other))[
        "session"]["headId"]
    before = (await stored(api, sid), await in_force(client, sid))
    bad = [
        ([{"name": "lookup", "inputSchema": {"type": "object", "properties": {"w": "x"}}}],
         None, None, "tools[0].input_schema.properties.w is not valid JSON Schema"),
        ([{"name": "lookup", "inputSchema": {"type": "string"}}], None, None,
         "tools[0].input_schema must be a JSON Schema object"),
        ([LOOKUP, LOOKUP], None, None, "repeated: lookup"),
        ([LOOKUP], {"mode": "TOOL", "name": "spell"}, None, "not an offered tool"),
        ([], {"mode": "ANY"}, None, "needs tools to choose from"),
        ([LOOKUP], None, foreign, "belongs to another session"),
    ]
    for tools, choice, head, message in bad:
        errors = await client.errors(SET_TOOLS, s=sid, t=tools, c=choice, h=head)
        assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors
        assert message in errors[0]["message"], errors[0]["message"]
    errors = await client.errors(SET_TOOLS, s=sid, t=[LOOKUP], c=None, h="nod_missing")
    assert errors[0]["extensions"]["code"] == "NOT_FOUND"
    assert (await stored(api, sid), await in_force(client, sid)) == before
    rows, _, _ = await api.db.driver.execute_query(
        "MATCH (v:ToolSetVersion {session_id: $s}) RETURN count(v) AS n", s=sid)
    assert rows[0]["n"] == 1


async def test_a_tool_choice_alone_is_checked_against_the_set_in_force(stub_api, stub):
    from tests.stubs.anthropic_stub import MESSAGES_PATH, reply

    client = stub_api.client
    sid = (await new_session(client))["id"]
    await set_tools(client, sid, [LOOKUP])
    send_choice = ("mutation($s: ID!, $c: ToolChoiceInput) { sendMessage(sessionId: $s,"
                   " content: \"Hi.\", toolChoice: $c) { reply { id } } }")
    before = await stored(stub_api, sid)
    errors = await client.errors(send_choice, s=sid, c={"mode": "TOOL", "name": "spell"})
    assert "not an offered tool" in errors[0]["message"]
    assert await stored(stub_api, sid) == before
    stub.enqueue(reply("Hi."))
    await client(send_choice, s=sid, c={"mode": "NONE"})
    body = stub.requests_to(MESSAGES_PATH)[-1].body
    assert names(body) == ["lookup"] and body["tool_choice"] == {"type": "none"}
