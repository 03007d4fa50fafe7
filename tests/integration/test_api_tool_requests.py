"""Tool definitions and tool history over GraphQL: a malformed tool schema or an empty
answer is BAD_INPUT that writes nothing, and every request the service sends (chat,
count_tokens, summarizer) or a client asks for carries the definitions of its tool blocks."""
from __future__ import annotations

import json
import types

import pytest

from tests.integration.helpers import snapshot
from tests.integration.test_api import new_session
from tests.integration.test_api_agent import TOOLS, send, submit

SEND = ("mutation($s: ID!, $c: String, $t: [ToolInput!]) { sendMessage(sessionId: $s,"
        " content: $c, tools: $t) { reply { id } } }")
SUBMIT = ("mutation($s: ID!, $r: [ToolResultBlockInput!]!) { submitToolResults(sessionId: $s,"
          " results: $r) { reply { id } } }")


async def stored(api, session_id):
    return await snapshot(types.SimpleNamespace(db=api.db), session_id)


@pytest.mark.parametrize("schema, named", [
    ({"type": "object", "properties": [1], "required": ["word"]}, "input_schema.properties"),
    ({"type": "object", "required": 5, "properties": {"word": {"type": "string"}}},
     "input_schema.required"),
    ({"type": "object", "properties": {"word": {"type": ["x"]}}, "required": ["word"]},
     "input_schema.properties.word.type"),
    ({"type": "object", "properties": {"word": "string"}, "required": ["word"]},
     "input_schema.properties.word"),
])
async def test_a_malformed_tool_schema_is_bad_input_and_writes_nothing(api, schema, named):
    client = api.client
    session = await new_session(client)
    before = await stored(api, session["id"])
    errors = await client.errors(SEND, s=session["id"], c="Please lookup ledger.",
                                 t=[{"name": "lookup", "inputSchema": schema}])
    assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors
    assert f"tools[0].{named} is not valid JSON Schema" in errors[0]["message"]
    assert await stored(api, session["id"]) == before


async def test_a_property_schema_of_true_or_of_several_types_is_a_tool_the_loop_calls(api):
    client = api.client
    session = await new_session(client)
    turn = await send(client, session["id"], "Please lookup ledger.", tools=[{
        "name": "lookup", "inputSchema": {
            "type": "object", "properties": {"word": {"type": ["string", "null"]}, "any": True},
            "required": ["word", "any"]}}])
    assert turn["error"] is None and len(turn["openToolUseIds"]) == 1
    assert turn["reply"]["blocks"][1]["input"]["word"] == "Please lookup ledger."


@pytest.mark.parametrize("answers", ["none", "twice"])
async def test_an_empty_or_repeated_answer_names_the_open_tool_uses(api, answers):
    client = api.client
    session = await new_session(client)
    turn = await send(client, session["id"], "lookup zebra", tools=TOOLS)
    (use_id,) = turn["openToolUseIds"]
    before = await stored(api, session["id"])
    results = [] if answers == "none" else [{"toolUseId": use_id, "content": "a horse"}] * 2
    errors = await client.errors(SUBMIT, s=session["id"], r=results)
    assert errors[0]["extensions"]["code"] == "BAD_INPUT"
    assert "at least one block" not in errors[0]["message"]
    assert f"open tool uses ({use_id})" in errors[0]["message"], errors[0]["message"]
    assert await stored(api, session["id"]) == before


async def test_answers_when_nothing_is_open_say_so(api):
    client = api.client
    session = await new_session(client)
    await send(client, session["id"], "Hello.")
    before = await stored(api, session["id"])
    errors = await client.errors(SUBMIT, s=session["id"], r=[])
    assert "has no open tool uses" in errors[0]["message"], errors[0]["message"]
    assert await stored(api, session["id"]) == before


# --------------------------------------------------------------------------- Anthropic

LOOKUP = TOOLS[0]
RENDER = ("query($s: ID!, $h: ID, $t: [ToolInput!]) { session(id: $s) { render(headId: $h) {"
          " request(format: ANTHROPIC_MESSAGES, model: \"claude-x\", maxTokens: 100, tools: $t)"
          " } } }")


def tool_blocks(body) -> list[dict]:
    return [b for m in body["messages"] if not isinstance(m["content"], str)
            for b in m["content"] if b["type"] in ("tool_use", "tool_result")]


def undefined(body) -> list[str]:
    """What the Messages API refuses: tool blocks whose tools the body does not define."""
    defined = {t["name"] for t in body.get("tools") or ()}
    blocks = tool_blocks(body)
    return ([b["name"] for b in blocks if b["type"] == "tool_use" and b["name"] not in defined]
            + (["tool_result without tools"] if blocks and not defined else []))


@pytest.fixture
async def stub_api(db, stub):
    from service.config import Settings
    from tests.api_client import Client
    from tests.app_server import serve

    settings = Settings.from_env({
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": stub.base_url,
        "CTXDAG_ANTHROPIC_MODEL": "claude-stub", "CTXDAG_ANTHROPIC_MAX_RETRIES": "0",
        "CTXDAG_ANTHROPIC_CONTEXT_WINDOW": "1000", "CTXDAG_KEEP_RECENT_TOKENS": "1"})
    async with serve(settings, db) as url:
        yield types.SimpleNamespace(client=Client(url), db=db)


async def test_no_request_carries_tool_blocks_without_their_tools(stub_api, stub):
    from tests.provider_requests import assert_valid_anthropic
    from tests.stubs.anthropic_stub import COUNT_TOKENS_PATH, MESSAGES_PATH, reply, tool_call

    client = stub_api.client
    session = await new_session(client)
    stub.enqueue(tool_call(("toolu_w1", "lookup", {"word": "ledger"}), text="Looking."),
                 reply("A ledger is a book of accounts."))
    turn = await send(client, session["id"], "What is a ledger?", tools=[LOOKUP])
    assert turn["openToolUseIds"] == ["toolu_w1"]
    answered = await submit(client, session["id"], [
        {"toolUseId": "toolu_w1", "content": "a book of accounts"}], tools=[LOOKUP])
    assert answered["error"] is None
    # A message without tools after the loop; then one over the budget, which compacts.
    stub.enqueue(reply("You are welcome."))
    plain = await send(client, session["id"], "Thanks.")
    assert plain["error"] is None and plain["reply"]["content"] == "You are welcome."
    stub.enqueue_count_tokens(900)
    stub.enqueue(reply("## Goal\n- define ledger"), reply("Bye."))
    compacted = await send(client, session["id"], "Bye.")
    assert compacted["error"] is None and compacted["reply"]["content"] == "Bye."

    counts = [r.body for r in stub.requests_to(COUNT_TOKENS_PATH)]
    chats = [r.body for r in stub.requests_to(MESSAGES_PATH)]
    assert len(counts) == 4 and len(chats) == 5
    assert any(tool_blocks(b) for b in counts), "the loop's counts read its tool blocks"
    for body in counts + chats:
        assert undefined(body) == [], body
    for body in chats:
        assert_valid_anthropic(body)
    # Without tools, the tool history reaches the chat and the summarizer as text.
    for body in (chats[2], chats[3]):  # the chat, the summarizer
        text = json.dumps(body["messages"])
        assert '<tool_use id=\\"toolu_w1\\" name=\\"lookup\\">' in text
        assert 'tool_result for=\\"toolu_w1\\">a book of accounts' in text

    # The request a client asks for follows the same rule: blocks with the tool, text without.
    head = answered["userNode"]["id"]
    bare = (await client(RENDER, s=session["id"], h=head, t=None))["session"]["render"]
    offered = (await client(RENDER, s=session["id"], h=head, t=[LOOKUP]))["session"]["render"]
    assert undefined(bare["request"]) == [] and tool_blocks(bare["request"]) == []
    assert [b["type"] for b in tool_blocks(offered["request"])] == ["tool_use", "tool_result"]
    assert_valid_anthropic(bare["request"])
    assert_valid_anthropic(offered["request"])


async def test_the_request_of_an_assistant_tip_ends_without_trailing_whitespace(api):
    from tests.provider_requests import assert_valid_anthropic

    client = api.client
    session = await new_session(client)
    append = ("mutation($s: ID!, $r: Role!, $c: String) { appendMessage(sessionId: $s,"
              " role: $r, content: $c) { id } }")
    await client(append, s=session["id"], r="USER", c="Start a poem.")
    tip = (await client(append, s=session["id"], r="ASSISTANT",
                        c="Roses are red,\n  "))["appendMessage"]["id"]
    body = (await client(RENDER, s=session["id"], h=tip, t=None))["session"]["render"]["request"]
    final = body["messages"][-1]
    assert final["role"] == "assistant" and final["content"][-1]["text"] == "Roses are red,"
    assert_valid_anthropic(body)
