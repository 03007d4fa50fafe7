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
