"""Turns with images and documents through the real Anthropic SDK against the stub, over
the GraphQL API: every block kind reaches the model in a request the SDK's own types take,
a failed turn never jams its branch, and a model outage leaves its failed call."""
from __future__ import annotations

import base64
import uuid

import pytest_asyncio

from service.config import Settings
from service.store import Database
from tests.api_client import Client
from tests.app_server import serve
from tests.integration.helpers import PDF
from tests.provider_requests import assert_valid_anthropic
from tests.stubs.anthropic_stub import (COUNT_TOKENS_PATH, MESSAGES_PATH, AnthropicStub,
                                        error, overloaded, tool_call)
from tests.unit.test_blocks import png

SOURCE = "source { url mediaType sha256 bytes width height pages }"
BLOCKS = f"""blocks {{
  __typename
  ... on TextBlock {{ text }}
  ... on ToolUseBlock {{ id name input }}
  ... on ToolResultBlock {{ toolUseId isError content {{ __typename
    ... on TextBlock {{ text }} ... on ImageBlock {{ {SOURCE} }} }} }}
  ... on ImageBlock {{ {SOURCE} }}
  ... on DocumentBlock {{ title {SOURCE} }}
}}"""
TURN = f"""userNode {{ id content {BLOCKS} }} reply {{ id content }} callId error errorCode
  call {{ id purpose errorCode readIds }}"""
SEND = ("mutation($s: ID!, $c: String, $b: [ContentBlockInput!], $t: [ToolInput!]) {"
        f" sendMessage(sessionId: $s, content: $c, blocks: $b, tools: $t) {{ {TURN} }} }}")
SUBMIT = ("mutation($s: ID!, $r: [ToolResultBlockInput!]!, $t: [ToolInput!]) {"
          f" submitToolResults(sessionId: $s, results: $r, tools: $t) {{ {TURN} }} }}")
STATE = """query($s: ID!) { session(id: $s) { nodeCount head { id }
  modelCalls(first: 50) { edges { node { id purpose errorCode error readIds } } } } }"""
TOOLS = [{"name": "snapshot", "description": "A picture of the screen.",
          "inputSchema": {"type": "object", "properties": {}}}]

PNG = base64.b64encode(png(40, 30)).decode()
PDF_DATA = base64.b64encode(PDF).decode()
NOTES = base64.b64encode(b"Plain notes: the ledger is append-only.\n").decode()


def image(source: dict) -> dict:
    return {"image": {"source": source}}


def document(source: dict, title: str | None = None) -> dict:
    return {"document": {"source": source, **({"title": title} if title else {})}}


def base64_source(media_type: str, data: str) -> dict:
    return {"base64": {"mediaType": media_type, "data": data}}


@pytest_asyncio.fixture(scope="module")
async def served(neo4j_driver):
    """The app served with Anthropic pointed at the stub (no SDK retries)."""
    tenant = f"test-media-{uuid.uuid4().hex[:8]}"
    with AnthropicStub() as stub:
        settings = Settings.from_env({
            "CTXDAG_TENANT": tenant, "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": stub.base_url, "CTXDAG_ANTHROPIC_MODEL": "claude-stub",
            "CTXDAG_ANTHROPIC_MAX_RETRIES": "0"})
        async with serve(settings, Database(neo4j_driver)) as url:
            yield Client(url), stub


async def new_session(client: Client) -> str:
    data = await client('mutation { createSession(title: "media", systemPrompt: "Look.") '
                        '{ id } }')
    return data["createSession"]["id"]


def bodies(stub: AnthropicStub, path: str = MESSAGES_PATH) -> list[dict]:
    return [r.body for r in stub.requests_to(path)]


def assert_valid_count(body: dict) -> None:
    """A count_tokens body is a Messages body without max_tokens (the SDK's types)."""
    assert_valid_anthropic({"max_tokens": 1024, **body})


async def turn(client: Client, query: str, **variables) -> dict:
    data = await client(query, **variables)
    (name,) = data
    result = data[name]
    assert result["error"] is None, result
    return result


async def test_every_block_kind_reaches_the_model_and_the_chain_goes_on(served):
    client, stub = served
    stub.reset()
    session = await new_session(client)
    kinds = [
        [{"text": {"text": "What is in this picture?"}},
         image(base64_source("image/png", PNG))],
        [{"text": {"text": "And this one?"}}, image({"url": "https://example.com/a.png"})],
        [{"text": {"text": "Read the spec."}},
         document(base64_source("application/pdf", PDF_DATA), "Spec")],
        [{"text": {"text": "And my notes."}}, document(base64_source("text/plain", NOTES))],
    ]
    for blocks in kinds:
        await turn(client, SEND, s=session, b=blocks)
    stub.enqueue(tool_call(("toolu_snap", "snapshot", {}), text="Taking one."))
    opened = await turn(client, SEND, s=session, c="Show me the screen.", t=TOOLS)
    assert opened["reply"] is not None
    answered = await turn(client, SUBMIT, s=session, t=TOOLS, r=[{
        "toolUseId": "toolu_snap", "parts": [
            {"text": {"text": "the screen"}},
            {"image": {"source": base64_source("image/png", PNG)}}]}])
    assert answered["userNode"]["blocks"][0]["content"][1]["source"]["width"] == 40
    after = await turn(client, SEND, s=session, c="Thanks, that is all.", t=TOOLS)
    assert after["reply"]["content"].startswith("echo: Thanks")

    sent = bodies(stub)
    assert len(sent) == 7, "one model call per turn, none refused before it"
    for body in sent:
        assert_valid_anthropic(body)
    for body in bodies(stub, COUNT_TOKENS_PATH):
        assert_valid_count(body)
    last = sent[-1]["messages"]
    sources = [b["source"] for m in last if not isinstance(m["content"], str)
               for b in m["content"] if b["type"] in ("image", "document")]
    assert sources == [
        {"type": "base64", "media_type": "image/png", "data": PNG},
        {"type": "url", "url": "https://example.com/a.png"},
        {"type": "base64", "media_type": "application/pdf", "data": PDF_DATA},
        {"type": "text", "media_type": "text/plain",
         "data": "Plain notes: the ledger is append-only.\n"}]
    result = next(b for m in last if not isinstance(m["content"], str)
                  for b in m["content"] if b["type"] == "tool_result")
    assert result["content"][1] == {"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": PNG}}
    state = (await client(STATE, s=session))["session"]
    assert state["nodeCount"] == 1 + 2 * 7
    assert all(e["node"]["errorCode"] is None for e in state["modelCalls"]["edges"])


async def test_a_call_that_read_media_replays_and_compacts_with_them(served):
    client, stub = served
    session = await new_session(client)
    await turn(client, SEND, s=session, b=[
        {"text": {"text": "What is in this picture?"}}, image(base64_source("image/png", PNG))])
    await turn(client, SEND, s=session, b=[
        {"text": {"text": "Read my notes."}}, document(base64_source("text/plain", NOTES))])
    last = await turn(client, SEND, s=session, c="Summing up.")
    stub.reset()
    replay = (await client("query($c: ID!) { call(id: $c) { replay { messages } } }",
                           c=last["callId"]))["call"]["replay"]
    sent_images = [b for m in replay["messages"] if not isinstance(m["content"], str)
                   for b in m["content"] if b["type"] == "image"]
    assert sent_images == [{"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": PNG}}]
    compacted = (await client(
        "mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 1) { status message } }",
        s=session))["compact"]
    assert compacted["status"] == "COMPACTED", compacted
    (summarizing,) = bodies(stub)
    assert_valid_anthropic(summarizing)
    assert {"type": "base64", "media_type": "image/png", "data": PNG} in [
        b.get("source") for m in summarizing["messages"] if not isinstance(m["content"], str)
        for b in m["content"]]
    await turn(client, SEND, s=session, c="After the summary.")


async def test_a_url_image_reads_back_from_every_block_read(served):
    client, _ = served
    session = await new_session(client)
    sent = await turn(client, SEND, s=session, b=[
        {"text": {"text": "Where is this?"}}, image({"url": "https://example.com/b.png"})])
    assert sent["userNode"]["blocks"][1]["source"] == {
        "url": "https://example.com/b.png", "mediaType": None, "sha256": None, "bytes": None,
        "width": None, "height": None, "pages": None}
    node_id = sent["userNode"]["id"]
    url = "blocks { ... on ImageBlock { source { url } } }"
    read = await client(f"query($n: ID!) {{ node(id: $n) {{ ... on Message {{ {url} }} }} }}",
                        n=node_id)
    rendered = await client(f"query($s: ID!) {{ session(id: $s) {{ render {{ nodes {{ id {url}"
                            f" }} }} }} }}", s=session)
    drawn = await client(f"query($s: ID!) {{ session(id: $s) {{ graph {{ nodes {{ id {url}"
                         f" }} }} }} }}", s=session)
    reads = [read["node"]["blocks"],
             *(n["blocks"] for n in rendered["session"]["render"]["nodes"] if n["id"] == node_id),
             *(n["blocks"] for n in drawn["session"]["graph"]["nodes"] if n["id"] == node_id)]
    assert [blocks[1]["source"]["url"] for blocks in reads] == ["https://example.com/b.png"] * 3


async def test_a_model_outage_records_the_failed_call_and_the_next_turn_works(served):
    client, stub = served
    session = await new_session(client)
    await turn(client, SEND, s=session, c="Look at this.")
    before = (await client(STATE, s=session))["session"]
    for refusal in (overloaded(), error(500, "api_error", "Internal server error")):
        stub.reset()
        stub.enqueue_count_tokens(refusal)
        stub.enqueue(refusal)
        data = await client(SEND, s=session, c="Still there?")
        failed = data["sendMessage"]
        assert failed["errorCode"] == "MODEL_UNAVAILABLE", failed
        assert failed["reply"] is None
        assert failed["call"] is not None and failed["call"]["errorCode"] == "MODEL_UNAVAILABLE"
        assert failed["call"]["readIds"][-1] == failed["userNode"]["id"]
    state = (await client(STATE, s=session))["session"]
    # Each failed turn wrote its user message and its failed call (README: failed calls are
    # recorded), nothing else; HEAD is the last message, so the next turn answers it.
    assert state["nodeCount"] == before["nodeCount"] + 2
    calls = [e["node"] for e in state["modelCalls"]["edges"]]
    assert [c["errorCode"] for c in calls[len(before["modelCalls"]["edges"]):]] == [
        "MODEL_UNAVAILABLE", "MODEL_UNAVAILABLE"]
    stub.reset()
    again = await turn(client, SEND, s=session, c="Are you back?")
    assert again["reply"]["content"].endswith("Are you back?")
    assert_valid_anthropic(bodies(stub)[-1])


async def test_an_unreachable_anthropic_leaves_the_user_message_and_its_failed_call(
        anthropic_runtime):
    from service.neo4j_local import free_port
    from service.store import Purpose

    refusing = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    runtime = anthropic_runtime(ANTHROPIC_BASE_URL=refusing, CTXDAG_ANTHROPIC_MAX_RETRIES="2")
    session = await runtime.ledger.sessions.create("outage", "Look.")
    result = await runtime.turns.send_message(session.id, "Anyone there?")
    assert result.reply is None
    assert result.error is not None and result.error.code == "MODEL_UNAVAILABLE"
    assert "could not reach Anthropic" in result.error.message
    assert "after 2 retries" in result.error.message
    assert result.call_id is not None, "README: failed calls are recorded"
    call = await runtime.ledger.calls.get(result.call_id)
    assert call.purpose is Purpose.CHAT and call.error_code == "MODEL_UNAVAILABLE"
    assert call.read_ids[-1] == result.user_node.id
    stored = await runtime.ledger.sessions.get(session.id)
    assert stored.head_id == result.user_node.id
