"""Agent conversations over GraphQL: blocks in and out, the tool loop with the offline
model, provider requests of every tip checked with the SDKs' types and the pairing rules."""
from __future__ import annotations

import base64

from tests.integration.test_api import new_session
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai
from tests.unit.test_blocks import png

BLOCKS = """blocks {
  __typename
  ... on TextBlock { text }
  ... on ThinkingBlock { thinking signature }
  ... on ToolUseBlock { id name input }
  ... on ToolResultBlock { toolUseId isError content { __typename ... on TextBlock { text } } }
  ... on ImageBlock { source { mediaType sha256 bytes width height data } }
}"""
MESSAGE = f"id role content toolUseIds {BLOCKS}"
TURN = f"""userNode {{ {MESSAGE} }} reply {{ {MESSAGE} }} openToolUseIds error errorCode
  call {{ id readIds }}"""
TOOLS = [{"name": "lookup", "description": "Looks a word up.",
          "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}},
                          "required": ["word"]}}]


async def send(client, session_id, content, **more):
    data = await client(
        "mutation($s: ID!, $c: String, $t: [ToolInput!], $cancel: Boolean!) {"
        f" sendMessage(sessionId: $s, content: $c, tools: $t, cancelOpenToolUses: $cancel)"
        f" {{ {TURN} }} }}", s=session_id, c=content, t=more.get("tools"),
        cancel=more.get("cancel", False))
    return data["sendMessage"]


async def submit(client, session_id, results, tools=TOOLS):
    data = await client(
        "mutation($s: ID!, $r: [ToolResultBlockInput!]!, $t: [ToolInput!]) {"
        f" submitToolResults(sessionId: $s, results: $r, tools: $t) {{ {TURN} }} }}",
        s=session_id, r=results, t=tools)
    return data["submitToolResults"]


async def requests_for(client, session_id, head_id=None):
    data = await client(
        "query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) { openToolUseIds"
        " anthropic: request(format: ANTHROPIC_MESSAGES, model: \"claude-x\", maxTokens: 100,"
        "   tools: [{name: \"lookup\", inputSchema: {type: \"object\"}}])"
        " openai: request(format: OPENAI_CHAT, model: \"gpt-x\") } } }", s=session_id, h=head_id)
    return data["session"]["render"]


async def open_uses(client, session_id):
    data = await client("query($s: ID!) { session(id: $s) { render { openToolUseIds } } }",
                        s=session_id)
    return data["session"]["render"]["openToolUseIds"]


async def test_the_offline_model_runs_the_tool_loop_over_graphql(api):
    client = api.client
    session = await new_session(client)
    turn = await send(client, session["id"], "Please lookup the word ledger.", tools=TOOLS)
    assert turn["error"] is None
    (use_id,) = turn["openToolUseIds"]
    use = turn["reply"]["blocks"][1]
    assert use == {"__typename": "ToolUseBlock", "id": use_id, "name": "lookup",
                   "input": {"word": "Please lookup the word ledger."}}
    assert turn["reply"]["toolUseIds"] == [use_id]
    assert await open_uses(client, session["id"]) == [use_id]

    refused = await client.errors(
        "mutation($s: ID!) { sendMessage(sessionId: $s, content: \"hello?\") { reply { id } } }",
        s=session["id"])
    assert refused[0]["extensions"]["code"] == "BAD_INPUT"
    assert use_id in refused[0]["message"]

    answered = await submit(client, session["id"], [
        {"toolUseId": use_id, "content": "a book of accounts\nmore lines"}])
    assert answered["openToolUseIds"] == []
    assert answered["userNode"]["role"] == "TOOL"
    assert answered["reply"]["content"].startswith("[offline model] The tools answered.")
    assert "a book of accounts" in answered["reply"]["content"]
    render = await requests_for(client, session["id"])
    assert_valid_anthropic(render["anthropic"])
    assert_valid_openai(render["openai"])
    assert render["anthropic"]["tools"] == [{"name": "lookup", "input_schema": {"type": "object"}}]
    offered = await client(
        "query($a: ID!, $b: ID!) { first: call(id: $a) { tools } second: call(id: $b) { tools }"
        " callDiff(first: $a, second: $b) { toolsChanged addedIds } }",
        a=turn["call"]["id"], b=answered["call"]["id"])
    assert offered["first"]["tools"] == offered["second"]["tools"] == [{
        "name": "lookup", "description": "Looks a word up.",
        "input_schema": TOOLS[0]["inputSchema"]}]
    assert offered["callDiff"]["toolsChanged"] is False
    plain = await send(client, session["id"], "Thanks.")
    diff = await client("query($a: ID!, $b: ID!) { callDiff(first: $a, second: $b) {"
                        " toolsChanged } call(id: $b) { tools } }",
                        a=answered["call"]["id"], b=plain["call"]["id"])
    assert diff["callDiff"]["toolsChanged"] is True and diff["call"]["tools"] is None


async def test_cancelling_open_tool_uses_stores_their_answers(api):
    client = api.client
    session = await new_session(client)
    turn = await send(client, session["id"], "lookup zebra", tools=TOOLS)
    (use_id,) = turn["openToolUseIds"]
    moved_on = await send(client, session["id"], "Never mind.", cancel=True)
    assert moved_on["error"] is None and moved_on["userNode"]["content"] == "Never mind."
    data = await client("query($id: ID!) { node(id: $id) { ... on Message { predecessorId } } }",
                        id=moved_on["userNode"]["id"])
    cancel_id = data["node"]["predecessorId"]
    cancel = (await client(f"query($id: ID!) {{ node(id: $id) {{ ... on Message {{ {MESSAGE}"
                           f" }} }} }}", id=cancel_id))["node"]
    assert cancel["role"] == "TOOL"
    assert cancel["blocks"][0]["toolUseId"] == use_id and cancel["blocks"][0]["isError"]
    render = await requests_for(client, session["id"])
    assert_valid_anthropic(render["anthropic"])
    assert_valid_openai(render["openai"])


async def test_blocks_in_and_out_with_an_image_and_a_refused_pair(api):
    client = api.client
    session = await new_session(client)
    data = base64.b64encode(png(20, 10)).decode()
    appended = await client(
        "mutation($s: ID!, $b: [ContentBlockInput!]) { appendMessage(sessionId: $s, role: USER,"
        f" blocks: $b) {{ {MESSAGE} tokens }} }}", s=session["id"], b=[
            {"text": {"text": "What is this?"}},
            {"image": {"source": {"base64": {"mediaType": "image/png", "data": data}}}}])
    message = appended["appendMessage"]
    image = message["blocks"][1]["source"]
    assert (image["width"], image["height"], image["data"]) == (20, 10, data)
    assert message["content"].startswith("What is this?\n\n[image image/png,")
    call = await client(
        "mutation($s: ID!, $b: [ContentBlockInput!]) { appendMessage(sessionId: $s,"
        " role: ASSISTANT, blocks: $b) { id toolUseIds } }", s=session["id"], b=[
            {"thinking": {"thinking": "Look closer.", "signature": "c2lnbmF0dXJl"}},
            {"toolUse": {"id": "toolu_zoom", "name": "zoom", "input": {"factor": 2}}}])
    assert call["appendMessage"]["toolUseIds"] == ["toolu_zoom"]
    errors = await client.errors(
        "mutation($s: ID!) { appendMessage(sessionId: $s, role: TOOL, blocks: [{toolResult:"
        " {toolUseId: \"toolu_other\", content: \"?\"}}]) { id } }", s=session["id"])
    assert errors[0]["extensions"]["code"] == "BAD_INPUT"
    assert "toolu_other" in errors[0]["message"] and "toolu_zoom" in errors[0]["message"]
    two_kinds = await client.errors(
        "mutation($s: ID!) { appendMessage(sessionId: $s, role: USER, blocks: [{text:"
        " {text: \"a\"}, image: {source: {url: \"https://a.io/x.png\"}}}]) { id } }",
        s=session["id"])
    assert two_kinds[0]["extensions"]["code"] == "BAD_INPUT"
    assert await open_uses(client, session["id"]) == ["toolu_zoom"]
    refused = await client.post(
        "query($s: ID!) { session(id: $s) { render { request(format: OPENAI_CHAT) } } }",
        {"s": session["id"]})
    assert refused["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    assert "toolu_zoom" in refused["errors"][0]["message"]
