"""ctxdag.client against the running service (the real app on a loopback port, the real
Neo4j): sessions, turns, the agent loop with the offline model and through the Anthropic
SDK against the stub, render and trace, search, import, and coded errors; sync and async.
The agent-loop example of docs/client.md runs as it is written."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from ctxdag.client import AsyncClient, Client, CtxdagError, Tool, ToolResult, tool_uses
from tests.browser import LiveService
from tests.doc_examples import examples
from tests.provider_requests import assert_valid_anthropic
from tests.stubs.anthropic_stub import MESSAGES_PATH, AnthropicStub, reply, tool_call

ROOT = Path(__file__).resolve().parents[2]
CC_SESSION = ROOT / "tests" / "fixtures" / "transcripts" / "claude_code" / "session.jsonl"
WORD = {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def lookup(word: str) -> str:
    return f"{word} -> a book of accounts"


def served(neo4j_server, **env: str) -> LiveService:
    run = uuid.uuid4().hex[:8]
    return LiveService(neo4j_server.uri, neo4j_server.user, neo4j_server.password,
                       tokens={f"client-token-{run}": f"client-tenant-{run}"}, env=env)


@pytest.fixture(scope="module")
def service(neo4j_server):
    with served(neo4j_server) as live:
        yield live


@pytest.fixture(scope="module")
def anthropic(neo4j_server):
    with AnthropicStub() as stub, served(
            neo4j_server, ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=stub.base_url,
            CTXDAG_ANTHROPIC_MODEL="claude-stub", CTXDAG_ANTHROPIC_MAX_RETRIES="0") as live:
        yield live, stub


def test_sessions_turns_and_the_agent_loop_with_the_offline_model(service):
    title = f"glossary {uuid.uuid4().hex[:6]}"
    with Client(service.url, service.token) as ctx:
        session = ctx.create_session(title, "You answer from the glossary.", project="/p/gl")
        assert ctx.get_session(session.id).title == title
        page = ctx.list_sessions(text=title, order_by="LAST_ACTIVITY", first=5)
        assert [s.id for s in page.nodes] == [session.id] and page.total_count == 1

        tools = [Tool("lookup", WORD, lookup, "Looks a word up.")]
        turn = ctx.run_agent(session.id, "Please lookup ledger.", tools)
        assert turn.open_tool_use_ids == []
        assert "a book of accounts" in turn.reply.content

        trace = ctx.trace(turn.call_id)
        assert [m.role.value for m in trace.reads] == ["SYSTEM", "USER", "ASSISTANT", "TOOL"]
        assert trace.read_ids == [m.id for m in trace.reads]
        assert trace.tools[0]["name"] == "lookup"
        (use,) = tool_uses(trace.reads[2])
        assert use.name == "lookup" and use.input == {"word": "Please lookup ledger."}
        result = trace.reads[3].blocks[0]
        assert result.tool_use_id == use.id and not result.is_error
        assert trace.reads[3].content.endswith("\nPlease lookup ledger. -> a book of accounts")

        render = ctx.render(session.id)
        assert render.node_ids[-1] == turn.reply.id and render.open_tool_use_ids == []
        body = ctx.request(session.id, "OPENAI_CHAT", model="gpt-4.1", tools=tools)
        assert body["model"] == "gpt-4.1" and body["tools"][0]["function"]["name"] == "lookup"

        hit = ctx.search("accounts", session_id=session.id).nodes[0]
        assert hit.session_id == session.id and hit.node.role.value == "TOOL"
        assert hit.context.state.value == "IN_CONTEXT"


def test_retry_edit_and_a_tool_use_answered_by_hand(service):
    with Client(service.url, service.token) as ctx:
        session = ctx.create_session("by hand")
        first = ctx.send_message(session.id, "Hello there.")
        retried = ctx.retry(first.reply.id)
        assert retried.reply.id != first.reply.id
        assert retried.reply.predecessor_id == first.user_node.id
        edited = ctx.edit_message(first.user_node.id, "Hello again.")
        assert edited.user_node.content == "Hello again."
        assert "Hello again" in edited.reply.content

        tools = [Tool("lookup", WORD)]
        opened = ctx.send_message(session.id, "Please lookup dag.", tools=tools,
                                  tool_choice="auto")
        (use_id,) = opened.open_tool_use_ids
        answered = ctx.submit_tool_results(
            session.id, [ToolResult(use_id, "no such word", is_error=True)], tools=tools)
        assert answered.open_tool_use_ids == [] and "no such word" in answered.reply.content
        assert answered.user_node.blocks[0].is_error


def test_errors_carry_the_service_code(service):
    with Client(service.url, service.token) as ctx:
        with pytest.raises(CtxdagError) as missing:
            ctx.get_session("no-such-session")
        assert missing.value.code == "NOT_FOUND"

        session = ctx.create_session("open tool use")
        tools = [Tool("lookup", WORD)]
        opened = ctx.send_message(session.id, "Please lookup ledger.", tools=tools)
        with pytest.raises(CtxdagError) as refused:
            ctx.send_message(session.id, "Something else.", tools=tools)
        assert refused.value.code == "BAD_INPUT"
        assert opened.open_tool_use_ids[0] in refused.value.message
        assert ctx.get_session(session.id).head_id == opened.reply.id, "nothing was written"

    with Client(service.url, "not-a-token") as stranger:
        with pytest.raises(CtxdagError) as unauthenticated:
            stranger.create_session("nobody's")
        assert unauthenticated.value.code == "UNAUTHENTICATED"

    with Client(f"{service.url}/elsewhere/graphql", service.token) as lost:
        with pytest.raises(CtxdagError) as http:
            lost.get_session("anything")
        assert http.value.code == "HTTP_404"


def test_an_unknown_tool_or_a_failing_function_is_an_error_result_the_model_reads(service):
    def broken(word: str) -> str:
        raise LookupError("the glossary is offline")

    with Client(service.url, service.token) as ctx:
        session = ctx.create_session("failing tool")
        turn = ctx.run_agent(session.id, "Please lookup ledger.", [Tool("lookup", WORD, broken)])
        tool_message = ctx.render(session.id).nodes[-2]
        (result,) = tool_message.blocks
        assert result.is_error
        assert tool_message.content.endswith("\nLookupError: the glossary is offline")
        assert "LookupError" in turn.reply.content


def test_import_a_transcript(service):
    with Client(service.url, service.token) as ctx:
        imported = ctx.import_transcript(CC_SESSION.read_text(), format="CLAUDE_CODE",
                                         file_name=CC_SESSION.name)
        assert imported.outcome.value == "NEW" and imported.written > 1
        assert imported.session.tool == "claude-code"
        again = ctx.import_transcript(CC_SESSION.read_text(), file_name=CC_SESSION.name)
        assert again.outcome.value == "UNCHANGED" and again.written == 0
        listed = ctx.list_sessions(tool="claude-code")
        assert imported.session.id in [s.id for s in listed.nodes]
        with pytest.raises(CtxdagError) as bad:
            ctx.import_transcript("not json\n", format="CLAUDE_CODE", strict=True)
        assert bad.value.code == "BAD_INPUT"


async def test_the_async_client_runs_the_same_loop_with_a_coroutine_tool(service):
    async def alookup(word: str) -> dict:
        return {"word": word, "meaning": "a book of accounts"}

    async with AsyncClient(f"{service.url}/graphql", service.token) as ctx:
        session = await ctx.create_session("async glossary")
        assert (await ctx.get_session(session.id)).id == session.id
        turn = await ctx.run_agent(session.id, "Please lookup ledger.",
                                   [Tool("lookup", WORD, alookup)])
        assert turn.open_tool_use_ids == [] and "a book of accounts" in turn.reply.content
        tool_message = (await ctx.render(session.id)).nodes[-2]
        assert tool_message.content.endswith(
            '\n{"word": "Please lookup ledger.", "meaning": "a book of accounts"}')
        hits = await ctx.search("meaning", session_id=session.id)
        assert hits.nodes and hits.nodes[0].session_id == session.id
        render = await ctx.render(session.id)
        assert render.node_ids[-1] == turn.reply.id
        retried = await ctx.retry(turn.reply.id, tools=[Tool("lookup", WORD)])
        assert retried.reply.id != turn.reply.id
        page = await ctx.list_sessions(text="async glossary")
        assert session.id in [s.id for s in page.nodes]
        with pytest.raises(CtxdagError) as missing:
            await ctx.trace("no-such-call")
        assert missing.value.code == "NOT_FOUND"


def weather(city: str) -> str:
    return {"Oslo": "-3 C", "Lima": "18 C"}[city]


def anthropic_tool_round(stub: AnthropicStub) -> None:
    stub.reset()
    stub.enqueue(tool_call(("toolu_c1", "weather", {"city": "Oslo"}),
                           ("toolu_c2", "weather", {"city": "Lima"}), text="Checking."),
                 reply("Oslo is cold, Lima is mild."))


def assert_the_stub_got_the_results(stub: AnthropicStub) -> None:
    bodies = [r.body for r in stub.requests_to(MESSAGES_PATH)]
    assert len(bodies) == 2
    for body in bodies:
        assert_valid_anthropic(body)
        assert body["tools"][0]["name"] == "weather"
    results = bodies[1]["messages"][-1]["content"]
    assert [(r["tool_use_id"], r["content"]) for r in results] == [
        ("toolu_c1", [{"type": "text", "text": "-3 C"}]),
        ("toolu_c2", [{"type": "text", "text": "18 C"}])]


def test_the_agent_loop_through_the_anthropic_provider(anthropic):
    live, stub = anthropic
    anthropic_tool_round(stub)
    with Client(live.url, live.token) as ctx:
        session = ctx.create_session("weather", "You check the weather.")
        turn = ctx.run_agent(session.id, "Weather in Oslo and Lima?",
                             [Tool("weather", CITY, weather, "Today's weather in a city.")])
        assert turn.reply.content == "Oslo is cold, Lima is mild."
        call = ctx.trace(turn.call_id)
        assert call.provider == "anthropic" and call.model == "claude-stub"
    assert_the_stub_got_the_results(stub)


async def test_the_async_agent_loop_through_the_anthropic_provider(anthropic):
    live, stub = anthropic
    anthropic_tool_round(stub)
    async with AsyncClient(live.url, live.token) as ctx:
        session = await ctx.create_session("weather", "You check the weather.")
        turn = await ctx.run_agent(session.id, "Weather in Oslo and Lima?",
                                   [Tool("weather", CITY, weather)])
        assert turn.reply.content == "Oslo is cold, Lima is mild."
    assert_the_stub_got_the_results(stub)


def test_the_docs_agent_loop_example_runs_against_the_service(service):
    """docs/client.md's runnable block (tests/doc_examples.py), here with a bearer token;
    test_doc_examples.py runs it in loopback mode."""
    (example,) = [e for e in examples(ROOT / "docs" / "client.md") if "run_agent(" in e.code]
    assert 25 <= len(example.code.strip().splitlines()) <= 40
    done = subprocess.run([sys.executable, "-c", example.for_service(service.url, "")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env={**os.environ, "CTXDAG_TOKEN": service.token})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "a book of accounts" in lines[0]
    assert lines[1] == "['SYSTEM', 'USER', 'ASSISTANT', 'TOOL'] lookup"
    assert lines[2] == "TOOL ['accounts']"
    assert lines[3] == "NOT_FOUND"


def test_bring_your_own_model_with_the_anthropic_sdk(service):
    """begin_turn hands the body to send; the runtime's own SDK call answers it; complete_turn
    takes the SDK's blocks and usage as they come. One key twice is one completion."""
    import anthropic as sdk

    with AnthropicStub() as stub, Client(service.url, service.token) as ctx:
        model = sdk.Anthropic(api_key="test-key", base_url=stub.base_url, max_retries=0)
        session = ctx.create_session("byom", "You answer briefly.")
        tools = [Tool("lookup", WORD, description="Looks a word up.")]
        draft = ctx.begin_turn(session.id, "Please lookup ledger.", tools=tools,
                               model="claude-stub", max_tokens=256)
        assert_valid_anthropic(draft.request)
        assert draft.head_id == draft.user_node.id == draft.read_ids[-1]
        stub.enqueue(tool_call(("toolu_client_1", "lookup", {"word": "ledger"})))
        message = model.messages.create(**draft.request)
        assert [r.body for r in stub.requests if r.path == MESSAGES_PATH][-1] == draft.request
        turn = ctx.complete_turn(draft.id, "one", "claude-stub", blocks=message.content,
                                 usage=message.usage, stop_reason=message.stop_reason)
        assert turn.open_tool_use_ids == ["toolu_client_1"] and turn.head_moved
        assert ctx.trace(turn.call_id).read_ids == draft.read_ids
        again = ctx.complete_turn(draft.id, "one", "claude-stub", content="ignored")
        assert again.replayed and again.call_id == turn.call_id

        results = [ToolResult("toolu_client_1", lookup("ledger"))]
        second = ctx.begin_turn(session.id, results=results, tools=tools, model="claude-stub",
                                max_tokens=256)
        assert_valid_anthropic(second.request)
        failed = ctx.complete_turn(second.id, "try-1", "claude-stub", error="overloaded",
                                   error_code="MODEL_UNAVAILABLE")
        assert failed.reply is None and failed.error_code == "MODEL_UNAVAILABLE"
        stub.enqueue(reply("Ledger: a book of accounts."))
        message = model.messages.create(**second.request)
        done = ctx.complete_turn(second.id, "try-2", "claude-stub", blocks=message.content)
        assert done.reply.content == "Ledger: a book of accounts." and done.head_moved
        with pytest.raises(CtxdagError) as closed:
            ctx.complete_turn(second.id, "try-3", "claude-stub", content="late")
        assert closed.value.code == "CONFLICT"
        model.close()


async def test_bring_your_own_model_async(service):
    async with AsyncClient(service.url, service.token) as ctx:
        session = await ctx.create_session("byom async")
        draft = await ctx.begin_turn(session.id, "Hello.", format="OPENAI_CHAT", model="gpt-x")
        assert draft.request["model"] == "gpt-x"
        assert draft.request["messages"][-1] == {"role": "user", "content": "Hello."}
        turn = await ctx.complete_turn(draft.id, "k", "gpt-x", content="Hi.",
                                       usage={"input_tokens": 9, "output_tokens": 2})
        assert turn.reply.content == "Hi." and turn.head_moved
        assert (await ctx.trace(turn.call_id)).read_ids == draft.read_ids
