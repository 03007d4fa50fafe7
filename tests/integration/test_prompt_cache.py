"""Prompt caching through the real anthropic SDK against the stub (docs/concepts/provenance.md):
the provider's cache tokens recorded on each call and summed, every call's
shared prefix with the previous one, and where and why it broke (a compaction, an edit,
other tools), over GraphQL too."""
import json
import uuid

import pytest

from service.config import Settings
from service.store import Ledger, Limits
from service.store.backup import export_session, import_session
from service.store.calls import BreakCause, cache_break
from service.turns.requests import Options, Tool
from tests.api_client import Client
from tests.app_server import serve
from tests.integration.helpers import DELETE_SESSION, broken_sessions, run_cypher, session_calls
from tests.provider_requests import assert_valid_anthropic, uncached
from tests.stubs.anthropic_stub import reply, tool_call

SYSTEM = "You are a careful assistant. " * 40  # 1,160 characters: 290 stub tokens
READ = Tool("read_file", "Reads a file.", {"type": "object", "properties": {
    "path": {"type": "string"}}, "required": ["path"]})


@pytest.fixture
def runtime(anthropic_runtime):
    return anthropic_runtime(CTXDAG_ANTHROPIC_MAX_RETRIES="0")


def sent(stub) -> list[dict]:
    return [r.body for r in stub.requests if r.path == "/v1/messages"]


async def calls_of(ledger, session_id):
    return await ledger.calls.get_many([c.id for c in await session_calls(ledger, session_id)])


async def break_of(ledger, call):
    previous = await ledger.calls.get(call.previous_call_id)
    ids = [*call.read_ids, *previous.read_ids]
    ids = list(dict.fromkeys(ids))
    nodes = {n.id: n for n in await ledger.nodes.get_many(ids)}
    return cache_break(previous, call, nodes, await ledger.summaries.covering_many(ids))


async def test_each_turn_reads_the_previous_prefix_and_the_tokens_add_up(runtime, stub):
    ledger, turns = runtime.ledger, runtime.turns
    session = await ledger.sessions.create("cache", SYSTEM)
    for i in range(3):
        await turns.send_message(session.id, f"Question {i}. " + "x" * 200)
    first, second, third = await calls_of(ledger, session.id)
    bodies = sent(stub)
    for body in bodies:
        assert_valid_anthropic(body)
    # The first call writes its whole prefix; each later one reads what the one before wrote.
    assert first.cache_read_input_tokens == 0 and first.cache_creation_input_tokens > 0
    assert second.cache_read_input_tokens == (first.cache_read_input_tokens
                                              + first.cache_creation_input_tokens)
    assert third.cache_read_input_tokens == (second.cache_read_input_tokens
                                             + second.cache_creation_input_tokens)
    # The shared prefix is the previous call's whole prompt, from the ledger alone.
    assert first.previous_call_id is None and first.shared_prefix_reads == 0
    assert first.shared_prefix_tokens == 0
    for before, call in ((first, second), (second, third)):
        assert call.previous_call_id == before.id
        assert call.shared_prefix_reads == before.read_count == len(before.read_ids)
        assert call.read_ids[:before.read_count] == before.read_ids
        assert call.shared_prefix_tokens == before.prompt_tokens
        assert await break_of(ledger, call) is None
    reads = await ledger.nodes.get_many(list(third.read_ids))
    assert third.prompt_tokens == sum(n.tokens for n in reads)

    totals = (await ledger.calls.cache_totals([(session.id, None)]))[session.id, None]
    assert totals.calls == 3
    assert totals.cache_read_input_tokens == sum(c.cache_read_input_tokens
                                                 for c in (first, second, third))
    assert totals.cache_creation_input_tokens == sum(c.cache_creation_input_tokens
                                                     for c in (first, second, third))
    assert totals.shared_prefix_tokens == second.shared_prefix_tokens + third.shared_prefix_tokens
    assert totals.prompt_tokens == sum(c.prompt_tokens for c in (first, second, third))


async def test_a_compaction_breaks_the_prefix_at_the_summary_and_the_summarizer_reads_it(
        runtime, stub):
    ledger, turns = runtime.ledger, runtime.turns
    session = await ledger.sessions.create("compact", SYSTEM)
    for i in range(4):
        await turns.send_message(session.id, f"Question {i}. " + "x" * 200)
    last_turn = sent(stub)[-1]
    stub.enqueue(reply("Four questions, each answered."))
    result = await runtime.compactor.compact(session.id, keep_recent_tokens=120)
    summary_id = result.summary.id
    await turns.send_message(session.id, "Question 4.")
    *_, before, summarizer, after = await calls_of(ledger, session.id)

    # The summarizer sends the conversation's own request, its instruction last.
    asked = sent(stub)[-2]
    assert_valid_anthropic(asked)
    conversation = uncached(last_turn)["messages"]
    assert uncached(asked)["messages"][:len(conversation)] == conversation
    instruction = asked["messages"][-1]["content"][-1]["text"]
    assert "## Goal" in instruction and "Question 3." in instruction  # the retained tail's
    assert uncached(asked)["system"] == uncached(last_turn)["system"]
    # ... so it reads the whole conversation from the cache, and its prefix is shared.
    assert summarizer.cache_read_input_tokens == (before.cache_read_input_tokens
                                                  + before.cache_creation_input_tokens)
    assert summarizer.shared_prefix_reads == before.read_count
    assert summarizer.shared_prefix_tokens == before.prompt_tokens
    assert summarizer.shared_prefix_tokens >= 0.9 * summarizer.prompt_tokens

    # The next turn shares ROOT alone: the summary stands where the covered turns were.
    assert after.shared_prefix_reads == 1
    found = await break_of(ledger, after)
    assert found.cause is BreakCause.COMPACTION
    assert (found.position, found.node_id) == (1, summary_id)
    # The provider reads the system prompt back, and writes the rest anew.
    assert after.cache_read_input_tokens == len(sent(stub)[-1]["system"][0]["text"]) // 4


async def test_an_edit_breaks_the_prefix_at_the_edited_message(runtime, stub):
    ledger, turns = runtime.ledger, runtime.turns
    session = await ledger.sessions.create("edit", SYSTEM)
    await turns.send_message(session.id, "Question 0. " + "x" * 200)
    asked = await turns.send_message(session.id, "Question 1. " + "y" * 200)
    await turns.edit(asked.user_node.id, "Question 1, edited. " + "z" * 200)
    first, second, edited = await calls_of(ledger, session.id)
    assert edited.previous_call_id == second.id
    assert edited.shared_prefix_reads == 3  # ROOT, the first question and its answer
    found = await break_of(ledger, edited)
    assert found.cause is BreakCause.EDIT
    assert found.previous_node_id == asked.user_node.id
    assert found.node_id == edited.read_ids[3] != asked.user_node.id
    # The provider reads through the first question (its mark), the edit's own tokens aside.
    assert 0 < edited.cache_read_input_tokens < second.cache_read_input_tokens + \
        second.cache_creation_input_tokens


async def test_agent_tool_turns_share_their_prefix_tools_included(runtime, stub):
    ledger, turns = runtime.ledger, runtime.turns
    session = await ledger.sessions.create("agent", SYSTEM)
    tools = Options(tools=(READ,))
    stub.enqueue(tool_call(("toolu_1", "read_file", {"path": "a.py"}), text="Reading."),
                 reply("a.py holds one function."))
    opened = await turns.send_message(session.id, "Read a.py. " + "x" * 200, options=tools)
    assert opened.open_tool_use_ids == ["toolu_1"]
    await turns.submit_tool_results(session.id, [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "def f(): pass"}],
        options=tools)
    await turns.send_message(session.id, "Now without tools.")
    use, answer, plain = await calls_of(ledger, session.id)
    for body in sent(stub):
        assert_valid_anthropic(body)
    assert answer.shared_prefix_reads == use.read_count
    assert answer.shared_prefix_tokens == use.prompt_tokens > sum(
        n.tokens for n in await ledger.nodes.get_many(list(use.read_ids)))  # tools counted
    assert answer.cache_read_input_tokens == (use.cache_read_input_tokens
                                              + use.cache_creation_input_tokens)
    # Offered other tools (none), the prompt shares nothing: tools come first.
    assert (plain.shared_prefix_reads, plain.shared_prefix_tokens) == (0, 0)
    assert (await break_of(ledger, plain)).cause is BreakCause.TOOLS
    assert plain.cache_read_input_tokens == 0


async def test_calls_stored_before_the_accounting_read_as_null_and_backups_keep_it(
        runtime, stub, db, tenant):
    ledger, turns = runtime.ledger, runtime.turns
    session = await ledger.sessions.create("old", SYSTEM)
    await turns.send_message(session.id, "Question 0.")
    await turns.send_message(session.id, "Question 1.")
    first, second = await calls_of(ledger, session.id)
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    other = f"test-{uuid.uuid4().hex[:12]}"
    assert await import_session(db, other, json.loads(json.dumps(document)), Limits()) \
        == session.id
    assert await broken_sessions(db, Limits(), other) == {}
    (again,) = await run_cypher(db, "MATCH (c:Call {id: $id, tenant: $t}) RETURN c {.*} AS c",
                                id=second.id, t=other)
    for key in ("cache_read_input_tokens", "cache_creation_input_tokens", "previous_call_id",
                "shared_prefix_reads", "shared_prefix_tokens", "prompt_tokens"):
        assert again["c"][key] == getattr(second, key)

    await run_cypher(db, "MATCH (c:Call {id: $id}) REMOVE c.cache_read_input_tokens, "
                     "c.cache_creation_input_tokens, c.previous_call_id, "
                     "c.shared_prefix_reads, c.shared_prefix_tokens, c.prompt_tokens",
                     id=first.id)
    old = await Ledger.open(db, other, Limits()).calls.get(first.id)
    assert (old.cache_read_input_tokens, old.previous_call_id, old.shared_prefix_tokens,
            old.prompt_tokens) == (None, None, None, None)


CACHE_QUERY = """query($id: ID!) { session(id: $id) {
  cacheUsage { calls promptTokens inputTokens cacheReadInputTokens cacheCreationInputTokens
               sharedPrefixTokens sharedPrefixShare }
  branches { isHead cacheUsage { calls sharedPrefixTokens cacheReadInputTokens } }
  modelCalls(first: 10) { edges { node { id purpose cacheReadInputTokens
    cacheCreationInputTokens promptTokens previousCallId sharedPrefixReads
    sharedPrefixTokens cacheBreak { position nodeId previousNodeId cause } } } } } }"""


async def test_graphql_gives_each_call_and_the_sums_per_session_and_branch(db, tenant, stub):
    settings = Settings.from_env({
        "CTXDAG_TENANT": tenant, "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": stub.base_url, "CTXDAG_ANTHROPIC_MODEL": "claude-stub",
        "CTXDAG_ANTHROPIC_MAX_RETRIES": "0"})
    async with serve(settings, db) as url:
        client = Client(url)
        session = (await client("mutation { createSession(title: \"g\", systemPrompt: "
                                f"{json.dumps(SYSTEM)}) {{ id }} }}"))["createSession"]
        send = ("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) "
                "{ userNode { id } } }")
        await client(send, s=session["id"], c="Question 0. " + "x" * 200)
        sent_1 = await client(send, s=session["id"], c="Question 1. " + "x" * 200)
        await client("mutation($n: ID!, $c: String!) { editMessage(nodeId: $n, content: $c) "
                     "{ userNode { id } } }",
                     n=sent_1["sendMessage"]["userNode"]["id"], c="Question 1, again.")
        found = (await client(CACHE_QUERY, id=session["id"]))["session"]
    calls = [e["node"] for e in found["modelCalls"]["edges"]]
    assert [c["cacheBreak"] for c in calls[:2]] == [None, None]
    assert calls[2]["cacheBreak"]["cause"] == "EDIT"
    assert calls[2]["cacheBreak"]["previousNodeId"] == sent_1["sendMessage"]["userNode"]["id"]
    usage = found["cacheUsage"]
    assert usage["calls"] == 3
    assert usage["cacheReadInputTokens"] == sum(c["cacheReadInputTokens"] for c in calls)
    assert usage["sharedPrefixTokens"] == sum(c["sharedPrefixTokens"] for c in calls)
    assert usage["sharedPrefixShare"] == usage["sharedPrefixTokens"] / usage["promptTokens"]
    branches = {b["isHead"]: b["cacheUsage"] for b in found["branches"]}
    # The edit's branch holds the first call and its own; the other, the first two.
    assert branches[True]["calls"] == 2 and branches[False]["calls"] == 2
    assert branches[True]["sharedPrefixTokens"] == (calls[0]["sharedPrefixTokens"]
                                                    + calls[2]["sharedPrefixTokens"])
