"""Streamed turns over the served API (docs/guides/agent-runtimes.md, "Streaming"): each
turn mutation's subscription twin through real websocket clients (`gql`'s and a plain
`websockets` one) and as a multipart HTTP stream; the offline model word by word; the
Anthropic model through the real SDK's streaming API against the local stub streaming as
the Messages API does (thinking, text, a tool use); a subscriber that leaves mid-reply
while the turn completes and is stored with its READ edges and HEAD; a stored reply the
same as the one its mutation stores for the same model answer."""
from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import types
import uuid

import pytest
import pytest_asyncio
import websockets
from gql import Client as GqlClient, GraphQLRequest, gql
from gql.transport.websockets import WebsocketsTransport

from service.config import Settings
from service.store import Database, Ledger, Limits
from tests.api_client import Client, socket
from tests.app_server import serve
from tests.integration.helpers import assert_sound, rendered
from tests.integration.test_http_subscriptions import subscribe as multipart
from tests.provider_requests import assert_valid_anthropic, assert_valid_anthropic_stream
from tests.stubs.anthropic_stub import (
    MESSAGES_PATH, AnthropicStub, PromptCache, overloaded, paused, reply, tool_call,
)

BLOCK = ("__typename ... on TextBlock { text } ... on ThinkingBlock { thinking signature } "
         "... on ToolUseBlock { id name input }")
TURN = (f"userNode {{ id }} reply {{ id role content predecessorId metadata toolUseIds "
        f"blocks {{ {BLOCK} }} }} callId error errorCode openToolUseIds headMoved "
        "call { id provider model readIds headId outputId inputTokens outputTokens "
        "cacheCreationInputTokens cacheReadInputTokens toolsSha256 errorCode }")
EVENT = f"""__typename
  ... on ModelCallStarted {{ call promptHeadId readCount }}
  ... on ReplyTextDelta {{ call index text }}
  ... on ReplyThinkingDelta {{ call index thinking }}
  ... on ReplyBlockClosed {{ call index block {{ {BLOCK} }} }}
  ... on TurnDone {{ turn {{ {TURN} }} }}"""
SEND_STREAM = ("subscription($s: ID!, $c: String!, $t: [ToolInput!]) { sendMessageStream("
               f"sessionId: $s, content: $c, tools: $t) {{ {EVENT} }} }}")
SEND = ("mutation($s: ID!, $c: String!, $t: [ToolInput!]) { sendMessage(sessionId: $s, "
        f"content: $c, tools: $t) {{ {TURN} }} }}")
RESULTS_STREAM = ("subscription($s: ID!, $r: [ToolResultBlockInput!]!, $t: [ToolInput!]) {"
                  f" submitToolResultsStream(sessionId: $s, results: $r, tools: $t) {{ {EVENT} }} }}")
RETRY_STREAM = f"subscription($n: ID!) {{ retryStream(nodeId: $n) {{ {EVENT} }} }}"
EDIT_STREAM = ("subscription($n: ID!, $c: String!) { editMessageStream(nodeId: $n, content: $c)"
               f" {{ {EVENT} }} }}")
SESSION = "query($s: ID!) { session(id: $s) { headId nodeCount modelCalls(first: 20) { nodes { id } } } }"
LOOKUP = {"name": "lookup", "description": "Looks a word up.",
          "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}},
                          "required": ["word"]}}


async def new_session(client, title="stream") -> str:
    data = await client("mutation($t: String) { createSession(title: $t, systemPrompt: "
                        "\"You answer briefly.\") { id } }", t=title)
    return data["createSession"]["id"]


async def streamed(client, query: str, **variables) -> list[dict]:
    """Every event of one streamed turn over a graphql-transport-ws socket, the TurnDone
    last (the operation completes after it)."""
    async with socket(client) as ws:
        messages = await ws.execute(query, variables, timeout=60)
    assert messages[-1]["type"] == "complete", messages
    payloads = [m["payload"] for m in messages if m["type"] == "next"]
    for payload in payloads:
        assert not payload.get("errors"), payload["errors"]
    return [next(iter(p["data"].values())) for p in payloads]


def kinds(events: list[dict]) -> list[str]:
    return [e["__typename"] for e in events]


def text_of(events: list[dict], call: int = 1) -> str:
    return "".join(e["text"] for e in events
                   if e["__typename"] == "ReplyTextDelta" and e["call"] == call)


async def read_edges_are_the_render(ledger: Ledger, session_id: str, turn: dict) -> None:
    """The call READ exactly the render of the prompt's tip, and the ledger is sound."""
    assert turn["call"]["readIds"] == await rendered(ledger, session_id, turn["call"]["headId"])
    await assert_sound(ledger, session_id)


# --------------------------------------------------------------------- the offline model


@pytest.fixture
def tenant_ledger(api):
    return Ledger.open(api.db, api.tenant, Limits())


async def test_a_stock_websocket_client_hears_the_reply_word_by_word_then_the_stored_turn(
        api, tenant_ledger):
    session = await new_session(api.client)
    transport = WebsocketsTransport(url=api.url.replace("http://", "ws://") + "/graphql",
                                    headers={"Authorization": f"Bearer {api.client.token}"},
                                    subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL])
    events = []
    async with GqlClient(transport=transport) as ws:
        async with asyncio.timeout(60):
            async for data in ws.subscribe(GraphQLRequest(gql(SEND_STREAM), variable_values={
                    "s": session, "c": "What is a ledger? Tell me."})):
                events.append(data["sendMessageStream"])
    started, *deltas, closed, done = events
    assert started["__typename"] == "ModelCallStarted" and started["call"] == 1
    turn = done["turn"]
    assert started["promptHeadId"] == turn["userNode"]["id"] == turn["call"]["headId"]
    assert started["readCount"] == len(turn["call"]["readIds"])
    assert set(kinds(deltas)) == {"ReplyTextDelta"} and len(deltas) > 5, "word by word"
    assert text_of(events) == turn["reply"]["content"] == closed["block"]["text"]
    assert turn["reply"]["content"].startswith("[offline model]")
    assert turn["headMoved"] is True and turn["error"] is None
    state = (await api.client(SESSION, s=session))["session"]
    assert state["headId"] == turn["reply"]["id"]
    await read_edges_are_the_render(tenant_ledger, session, turn)

    # The mutation stores the same reply for the same conversation.
    twin = await new_session(api.client)
    plain = (await api.client(SEND, s=twin, c="What is a ledger? Tell me."))["sendMessage"]
    assert plain["reply"]["content"] == turn["reply"]["content"]
    assert plain["reply"]["metadata"] == turn["reply"]["metadata"]


async def test_the_agent_loop_streamed_tool_use_closed_then_results_answered(
        api, tenant_ledger):
    session = await new_session(api.client)
    first = await streamed(api.client, SEND_STREAM, s=session, c="Please lookup ledger.",
                           t=[LOOKUP])
    closed = [e for e in first if e["__typename"] == "ReplyBlockClosed"]
    use = closed[-1]["block"]
    assert use["__typename"] == "ToolUseBlock" and use["name"] == "lookup"
    assert use["input"] == {"word": "Please lookup ledger."}
    turn = first[-1]["turn"]
    assert turn["openToolUseIds"] == [use["id"]]
    assert closed[-1]["index"] == 1 and kinds(first)[-2] == "ReplyBlockClosed"

    second = await streamed(api.client, RESULTS_STREAM, s=session, t=[LOOKUP],
                            r=[{"toolUseId": use["id"], "content": "a book of accounts"}])
    turn = second[-1]["turn"]
    assert second[0]["promptHeadId"] == turn["userNode"]["id"]
    assert "a book of accounts" in text_of(second) == turn["reply"]["content"]
    assert turn["openToolUseIds"] == []
    await read_edges_are_the_render(tenant_ledger, session, turn)

    # retry and edit stream alike, each a fork HEAD moves to.
    again = await streamed(api.client, RETRY_STREAM, n=turn["reply"]["id"])
    retried = again[-1]["turn"]
    assert retried["reply"]["predecessorId"] == turn["userNode"]["id"]
    assert text_of(again) == retried["reply"]["content"]
    edited = await streamed(api.client, EDIT_STREAM, n=first[-1]["turn"]["userNode"]["id"],
                            c="Just say hello.")
    assert "Just say hello." in text_of(edited) == edited[-1]["turn"]["reply"]["content"]
    state = (await api.client(SESSION, s=session))["session"]
    assert state["headId"] == edited[-1]["turn"]["reply"]["id"]
    await read_edges_are_the_render(tenant_ledger, session, edited[-1]["turn"])


async def test_a_plain_http_client_reads_a_streamed_turn_as_a_multipart_stream(api):
    session = await new_session(api.client)
    events = []
    async with multipart(api.url, api.client, SEND_STREAM, s=session, c="Over HTTP, please.",
                         t=None) as stream:
        while (payload := await stream.next(timeout=60)) is not None:
            assert not payload.get("errors"), payload
            events.append(payload["data"]["sendMessageStream"])
    assert kinds(events)[0] == "ModelCallStarted" and kinds(events)[-1] == "TurnDone"
    assert text_of(events) == events[-1]["turn"]["reply"]["content"]


async def test_a_refused_streamed_turn_is_a_coded_error_and_writes_nothing(api):
    session = await new_session(api.client)
    async with socket(api.client) as ws:
        for variables, code in (({"s": "no-such-session", "c": "hello"}, "NOT_FOUND"),
                                ({"s": session, "c": ""}, "BAD_INPUT")):
            messages = await ws.execute(SEND_STREAM, variables)
            errors = [e for m in messages if m["type"] == "next"
                      for e in m["payload"].get("errors") or []] + [
                e for m in messages if m["type"] == "error" for e in m["payload"]]
            assert [e["extensions"]["code"] for e in errors] == [code], messages
    assert (await api.client(SESSION, s=session))["session"]["nodeCount"] == 1
    async with socket(api.anonymous) as ws:
        messages = await ws.execute(SEND_STREAM, {"s": session, "c": "hi"})
        assert "UNAUTHENTICATED" in json.dumps(messages)


# ----------------------------------------------- the Anthropic model through the SDK


@pytest.fixture(scope="module")
def model():
    with AnthropicStub() as stub:
        yield stub


@pytest_asyncio.fixture(scope="module")
async def served(neo4j_driver, model):
    """The app served with the Anthropic provider, the SDK pointed at the stub."""
    tenant = f"streams-{uuid.uuid4().hex[:8]}"
    settings = Settings.from_env({
        "CTXDAG_TENANT": tenant, "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": model.base_url, "CTXDAG_ANTHROPIC_MODEL": "claude-stub",
        "CTXDAG_ANTHROPIC_MAX_RETRIES": "0"})
    database = Database(neo4j_driver)
    async with serve(settings, database) as url:
        yield types.SimpleNamespace(url=url, client=Client(url), stub=model,
                                    ledger=Ledger.open(database, tenant, Limits()))


def sent(stub) -> list[dict]:
    return [r.body for r in stub.requests_to(MESSAGES_PATH)]


def stored(turn: dict) -> dict:
    """What a turn stored, less what differs between any two turns (ids, the request id)."""
    reply = dict(turn["reply"])
    for key in ("id", "predecessorId"):
        reply.pop(key)
    reply["metadata"] = {k: v for k, v in reply["metadata"].items() if k != "request_id"}
    call = {k: v for k, v in turn["call"].items()
            if k not in ("id", "readIds", "headId", "outputId")}
    return {"reply": reply, "call": call, "reads": len(turn["call"]["readIds"]),
            "open": turn["openToolUseIds"], "headMoved": turn["headMoved"]}


async def test_the_sdk_streams_thinking_text_and_a_tool_use_and_stores_what_it_would_unstreamed(
        served):
    stub, client = served.stub, served.client
    stub.reset()
    answer = tool_call(("toolu_s01", "lookup", {"word": "ledger", "senses": [1, 2]}),
                       text="Let me look that up.",
                       thinking=("The user wants a definition of ledger.", "c2lnLXN0cmVhbQ=="))
    stub.enqueue(answer, answer)
    plain_session, session = await new_session(client), await new_session(client)
    plain = (await client(SEND, s=plain_session, c="Define ledger.", t=[LOOKUP]))["sendMessage"]
    stub.cache = PromptCache()  # the second request as cold as the first
    events = await streamed(client, SEND_STREAM, s=session, c="Define ledger.", t=[LOOKUP])
    turn = events[-1]["turn"]

    assert kinds(events) == ["ModelCallStarted", *["ReplyThinkingDelta"] * 7,
                             "ReplyBlockClosed", *["ReplyTextDelta"] * 5, "ReplyBlockClosed",
                             "ReplyBlockClosed", "TurnDone"], kinds(events)
    assert "".join(e["thinking"] for e in events if e["__typename"] == "ReplyThinkingDelta") \
        == "The user wants a definition of ledger."
    closed = [e for e in events if e["__typename"] == "ReplyBlockClosed"]
    assert [(e["index"], e["block"]) for e in closed] == [
        (0, {"__typename": "ThinkingBlock", "thinking": "The user wants a definition of ledger.",
             "signature": "c2lnLXN0cmVhbQ=="}),
        (1, {"__typename": "TextBlock", "text": "Let me look that up."}),
        (2, {"__typename": "ToolUseBlock", "id": "toolu_s01", "name": "lookup",
             "input": {"word": "ledger", "senses": [1, 2]}})]
    assert text_of(events) == "Let me look that up."
    # Stored as the mutation stores the same answer: blocks, metadata, usage, HEAD, reads.
    assert stored(turn) == stored(plain)
    assert turn["reply"]["blocks"] == [e["block"] for e in closed]
    assert turn["call"]["provider"] == "anthropic" and turn["openToolUseIds"] == ["toolu_s01"]
    await read_edges_are_the_render(served.ledger, session, turn)
    # The request is the mutation's, streamed: the SDK's streaming type takes it.
    unstreamed, streamed_body = sent(stub)
    assert_valid_anthropic(unstreamed)
    assert_valid_anthropic_stream(streamed_body)
    assert {k: v for k, v in streamed_body.items() if k != "stream"} == unstreamed

    stub.enqueue(reply("A ledger is a book of accounts."))
    after = await streamed(client, RESULTS_STREAM, s=session, t=[LOOKUP], r=[
        {"toolUseId": "toolu_s01", "content": "ledger: a book of accounts"}])
    assert text_of(after) == "A ledger is a book of accounts."
    assert [e["text"] for e in after if e["__typename"] == "ReplyTextDelta"][:2] == [
        "A", " ledger"], "word by word, as the stub streams"
    done = after[-1]["turn"]
    assert done["reply"]["content"] == "A ledger is a book of accounts."
    assert done["openToolUseIds"] == [] and done["headMoved"] is True
    assert_valid_anthropic_stream(sent(stub)[-1])
    await read_edges_are_the_render(served.ledger, session, done)


async def test_a_failed_streamed_call_is_told_in_the_turn_and_recorded(served):
    stub, client = served.stub, served.client
    stub.reset()
    stub.enqueue(overloaded())
    session = await new_session(client)
    events = await streamed(client, SEND_STREAM, s=session, c="Are you there?", t=None)
    assert kinds(events) == ["ModelCallStarted", "TurnDone"]
    turn = events[-1]["turn"]
    assert turn["reply"] is None and turn["errorCode"] == "MODEL_UNAVAILABLE"
    assert turn["call"]["errorCode"] == "MODEL_UNAVAILABLE"
    state = (await client(SESSION, s=session))["session"]
    assert state["headId"] == turn["userNode"]["id"]
    assert [c["id"] for c in state["modelCalls"]["nodes"]] == [turn["callId"]]


async def test_a_subscriber_that_leaves_mid_reply_loses_nothing(served):
    stub, client = served.stub, served.client
    stub.reset()
    gate = threading.Event()
    text = "Every entry stays in order, and nothing is ever erased."
    stub.enqueue(paused(reply(text), gate, after=3))
    session = await new_session(client)
    url = client.base_url.replace("http://", "ws://") + "/graphql"
    heard = []
    async with websockets.connect(url, subprotocols=["graphql-transport-ws"]) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        assert json.loads(await ws.recv())["type"] == "connection_ack"
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": {
            "query": SEND_STREAM, "variables": {"s": session, "c": "How do ledgers work?"}}}))
        async with asyncio.timeout(60):
            while kinds(heard).count("ReplyTextDelta") < 3:
                message = json.loads(await ws.recv())
                assert message["type"] == "next", message
                heard.append(message["payload"]["data"]["sendMessageStream"])
    # The socket is closed, mid-reply: the model is still held at its third word.
    user_id = heard[0]["promptHeadId"]
    assert text_of(heard) == "Every entry stays"
    assert (await client(SESSION, s=session))["session"]["headId"] == user_id
    gate.set()

    async with asyncio.timeout(60):  # the turn runs on without its subscriber
        while (state := (await client(SESSION, s=session))["session"])["headId"] == user_id:
            await asyncio.sleep(0.05)
    calls = state["modelCalls"]["nodes"]
    assert len(calls) == 1 and state["nodeCount"] == 3  # ROOT, the message, the reply
    call = (await client("query($c: ID!) { call(id: $c) { readIds headId outputId "
                         "errorCode outputTokens } }", c=calls[0]["id"]))["call"]
    assert call["outputId"] == state["headId"] and call["headId"] == user_id
    assert call["errorCode"] is None
    assert call["readIds"] == await rendered(served.ledger, session, user_id)
    reply_node = (await client("query($n: ID!) { node(id: $n) { ... on Message { content "
                               "predecessorId metadata } } }", n=state["headId"]))["node"]
    assert reply_node["content"] == text and reply_node["predecessorId"] == user_id
    assert reply_node["metadata"]["stop_reason"] == "end_turn"
    await assert_sound(served.ledger, session)
    assert stub.errors == []
