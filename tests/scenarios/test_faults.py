"""Faults: Neo4j restarted under a running service; the model and summarizer failing."""
import asyncio
import uuid

import httpx
import pytest

from service.config import Settings
from service.neo4j_local import LocalNeo4j, ensure_jars, free_port
from tests.api_client import Client, GraphQLErrors
from tests.scenarios.conversation import Conversation
from tests.service_process import ServiceProcess
from tests.stubs.anthropic_stub import (
    StubResponse, error, overloaded, prompt_too_long, reply,
)

SESSION_STATE = "query($s: ID!) { session(id: $s) { headId nodeCount render { nodeIds } } }"


async def test_neo4j_restart_under_a_running_service(tmp_path):
    lib = await asyncio.to_thread(ensure_jars, Settings.from_env().cache_dir)
    neo4j = LocalNeo4j(tmp_path / "home", free_port(), lib, heap="512m", pagecache_mb=64)
    uri = await asyncio.to_thread(neo4j.start)
    service = ServiceProcess({"NEO4J_URI": uri, "NEO4J_PASSWORD": "",
                              "CTXDAG_TENANT": f"restart-{uuid.uuid4().hex[:6]}"})
    try:
        await asyncio.to_thread(service.start)
        client = Client(service.url)
        c = await Conversation.start(client, "survives a database restart")
        await c.chat(2)
        before = await client(SESSION_STATE, s=c.id)

        await asyncio.to_thread(neo4j.stop)
        async with httpx.AsyncClient(timeout=90) as http:  # the bound on any wait
            health = await http.get(f"{service.url}/healthz")
            assert health.status_code == 503 and health.json()["status"] == "unavailable"
            with pytest.raises(GraphQLErrors) as caught:
                await client(SESSION_STATE, s=c.id)
        assert caught.value.codes == ["UNAVAILABLE"]
        assert "Neo4j" in caught.value.errors[0]["message"]
        with pytest.raises(GraphQLErrors) as caught:
            await c.say("Written while the database is down?")
        assert caught.value.codes == ["UNAVAILABLE"]

        await asyncio.to_thread(neo4j.start)
        async with httpx.AsyncClient(timeout=30) as http:
            for _ in range(150):  # the service reconnects by itself
                if (await http.get(f"{service.url}/healthz")).status_code == 200:
                    break
                await asyncio.sleep(0.2)
        assert await client(SESSION_STATE, s=c.id) == before  # nothing committed was lost
        await c.expect()
        await c.chat(1, start=2)
        await c.expect()
    finally:
        service.stop()
        await asyncio.to_thread(neo4j.stop)


@pytest.fixture(scope="module")
def anthropic_service(neo4j_server, stub):
    process = ServiceProcess({
        "NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
        "NEO4J_PASSWORD": neo4j_server.password,
        "CTXDAG_TENANT": f"faults-{uuid.uuid4().hex[:6]}",
        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": stub.base_url,
        "CTXDAG_ANTHROPIC_MODEL": "claude-stub", "CTXDAG_ANTHROPIC_MAX_RETRIES": "0",
        "CTXDAG_ANTHROPIC_TIMEOUT": "2", "CTXDAG_KEEP_RECENT_TOKENS": "60",
    })
    with process:
        yield process


async def chatted(client, stub, turns=4):
    c = await Conversation.start(client, "faults")
    for i in range(turns):
        stub.enqueue(reply(f"Answer {i}. ".ljust(100, "y")))
        await c.say(f"Question {i}. ".ljust(100, "x"))
    return c


async def compaction_events(client, session_id, action):
    ready = asyncio.Event()
    query = ("subscription($s: ID!) { sessionEvents(sessionId: $s) { type"
             " ... on CompactionFailed { reason code } } }")
    listener = asyncio.create_task(client.subscribe(query, {"s": session_id}, 2, ready))
    await ready.wait()
    result = await action()
    return result, [p["data"]["sessionEvents"] for p in await listener]


@pytest.mark.parametrize("failure, code", [
    (overloaded(), "MODEL_UNAVAILABLE"),
    (StubResponse(200, reply("late").body, delay=5), "MODEL_UNAVAILABLE"),  # client timeout
    (prompt_too_long(), "CONTEXT_OVERFLOW"),
])
async def test_a_failing_summarizer_writes_nothing_and_the_session_goes_on(
        anthropic_service, stub, failure, code):
    client = Client(anthropic_service.url)
    c = await chatted(client, stub)
    before = await client(SESSION_STATE, s=c.id)
    stub.enqueue(failure)
    result, events = await compaction_events(client, c.id, lambda: client(
        "mutation($s: ID!) { compact(sessionId: $s) { status errorCode message } }", s=c.id))
    assert result["compact"]["status"] == "FAILED"
    assert result["compact"]["errorCode"] == code
    assert [e["type"] for e in events] == ["COMPACTION_STARTED", "COMPACTION_FAILED"]
    assert events[1]["code"] == code
    assert await client(SESSION_STATE, s=c.id) == before    # no node, HEAD unmoved
    await c.expect()
    stub.enqueue(reply("Still here."))
    await c.say("Are you still usable?")
    await c.expect()


async def test_a_provider_error_mid_turn_keeps_the_user_turn(anthropic_service, stub):
    client = Client(anthropic_service.url)
    c = await chatted(client, stub, turns=1)
    stub.enqueue(error(500, "api_error", "Internal server error"))
    turn = (await client("mutation($s: ID!) { sendMessage(sessionId: $s, content: \"Hello?\") {"
                         " userNode { id } reply { id } errorCode call { error readIds } } }",
                         s=c.id))["sendMessage"]
    assert turn["reply"] is None and turn["errorCode"] == "MODEL_UNAVAILABLE"
    assert "500" in turn["call"]["error"]
    state = (await client(SESSION_STATE, s=c.id))["session"]
    assert state["headId"] == turn["userNode"]["id"]
    assert turn["call"]["readIds"] == state["render"]["nodeIds"]


async def test_provider_overflow_compacts_and_retries_once(anthropic_service, stub):
    client = Client(anthropic_service.url)
    c = await chatted(client, stub)
    stub.enqueue(prompt_too_long(), reply("A summary of the first questions."),
                 reply("The answer, after compaction."))
    turn = (await client("mutation($s: ID!) { sendMessage(sessionId: $s, content: \"More?\") {"
                         " reply { content } compaction { status summary { id } }"
                         " call { readIds } } }", s=c.id))["sendMessage"]
    assert turn["reply"]["content"] == "The answer, after compaction."
    assert turn["compaction"]["status"] == "COMPACTED"
    assert turn["call"]["readIds"][1] == turn["compaction"]["summary"]["id"]
