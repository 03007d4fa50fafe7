"""The Anthropic adapter through the real SDK, against a local stub of the Messages API.

No database and no network: `tests.stubs.anthropic_stub.AnthropicStub` is a real HTTP
server on 127.0.0.1, so the SDK's own request building, retries and error classes run.
"""
from __future__ import annotations

import json
import socket
from datetime import datetime, timezone

import anthropic
import pytest
import pytest_asyncio

from service.config import Settings
from service.context.summarizers import SummaryText
from service.errors import ConfigurationError, ContextOverflow, ModelError, ModelUnavailable
from service.llm.anthropic import (
    AnthropicSettings, Completion, complete, count_tokens, make_client,
    translate_anthropic_errors,
)
from service.llm.anthropic_summarizer import AnthropicSummarizer, AnthropicTokenCounter
from service.llm.prompts import SUMMARY_SYSTEM, summary_prompt
from service.store import Node, Role
from service.turns.messages import to_messages
from tests.stubs.anthropic_stub import (
    COUNT_TOKENS_PATH, MESSAGES_PATH, AnthropicStub, PromptCache, StubResponse, error,
    estimate_input_tokens, overloaded, prompt_too_long, reply,
)

KEY = "sk-ant-test-key"


@pytest.fixture
def stub():
    with AnthropicStub(api_key=KEY) as server:
        yield server
        assert not server.errors, server.errors


@pytest_asyncio.fixture
async def connect(stub):
    """`connect(**settings)` → a client for the stub; all are closed at teardown."""
    clients = []

    def _connect(**overrides) -> tuple[anthropic.AsyncAnthropic, AnthropicSettings]:
        settings = AnthropicSettings(**{"api_key": KEY, "base_url": stub.base_url,
                                        "model": "claude-stub", "timeout": 10.0, **overrides})
        client = make_client(settings)
        clients.append(client)
        return client, settings

    yield _connect
    for client in clients:
        await client.close()


def node(role: str, content: str, i: int = 0) -> Node:
    return Node(id=f"n{i}", session_id="s1", role=Role(role), content=content,
                created_at=datetime(2025, 1, 1, tzinfo=timezone.utc), tokens=len(content) // 4,
                metadata={}, seq=i, depth=i, predecessor_id=f"n{i - 1}" if i else None,
                caller_id=None, side_branch=False, deleted_at=None)


def nodes(*pairs: tuple[str, str]) -> list[Node]:
    return [node(role, content, i) for i, (role, content) in enumerate(pairs)]


USER_ONLY = [{"role": "user", "content": "hello"}]


# --------------------------------------------------------------------------- complete


async def test_completion_sends_exactly_what_it_was_given(stub, connect):
    client, _ = connect()
    stub.enqueue(reply("Hi! How can I help?", input_tokens=21, output_tokens=7))
    messages = [{"role": "user", "content": "hello"},
                {"role": "assistant", "content": "hi"},
                {"role": "user", "content": "how are you?"}]

    done = await complete(client, model="claude-test-1", system="You are terse.",
                          messages=messages, max_tokens=321)

    assert done == Completion(text="Hi! How can I help?", model="claude-test-1",
                              input_tokens=21, output_tokens=7, stop_reason="end_turn",
                              request_id=done.request_id,
                              blocks=[{"type": "text", "text": "Hi! How can I help?"}],
                              cache_creation_input_tokens=0, cache_read_input_tokens=0)
    assert done.request_id and done.request_id.startswith("req_")
    [sent] = stub.requests
    assert sent.path == MESSAGES_PATH and sent.method == "POST"
    assert sent.body == {"model": "claude-test-1", "max_tokens": 321,
                         "system": "You are terse.", "messages": messages}
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert "anthropic-version" in sent.headers
    assert sent.retry_count == 0


async def test_text_blocks_are_joined_and_an_empty_system_is_left_out(stub, connect):
    client, _ = connect()
    base = reply("x")
    stub.enqueue(StubResponse(200, lambda body: {
        **base.body(body),
        "content": [{"type": "text", "text": "part one, "}, {"type": "text", "text": "part two"}],
    }))
    done = await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)
    assert done.text == "part one, part two"
    assert "system" not in stub.requests[0].body


async def test_unscripted_requests_get_the_default_echo(stub, connect):
    client, _ = connect()
    done = await complete(client, model="m", system="s", messages=USER_ONLY, max_tokens=5)
    assert done.text == "echo: hello"
    assert done.input_tokens == estimate_input_tokens(stub.requests[0].body)


async def test_base_url_with_v1_is_not_doubled(stub, connect):
    client, _ = connect(base_url=stub.base_url + "/v1/")
    await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)
    assert [r.path for r in stub.requests] == [MESSAGES_PATH]


# --------------------------------------------------------------------------- retries and errors


async def test_overloaded_once_then_success_is_retried_by_the_sdk(stub, connect):
    client, _ = connect(max_retries=2)
    stub.enqueue(overloaded(), reply("made it"))
    done = await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)
    assert done.text == "made it"
    assert [r.retry_count for r in stub.requests] == [0, 1]
    assert stub.requests[0].body == stub.requests[1].body


@pytest.mark.parametrize("max_retries", [0, 1])
async def test_overloaded_throughout_is_model_unavailable(stub, connect, max_retries):
    client, _ = connect(max_retries=max_retries)
    stub.enqueue(*[overloaded()] * 5)
    with pytest.raises(ModelUnavailable) as caught:
        await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)
    assert len(stub.requests) == max_retries + 1
    assert [r.retry_count for r in stub.requests] == list(range(max_retries + 1))
    e = caught.value
    assert e.code == "MODEL_UNAVAILABLE"
    assert "Anthropic is overloaded (HTTP 529)" in e.message and "Overloaded" in e.message
    assert ("with no retries" if max_retries == 0 else "after 1 retry") in e.message
    assert e.details["status"] == 529 and e.details["retries"] == max_retries
    assert e.details["provider_error"] == "overloaded_error"
    assert isinstance(e.__cause__, anthropic.OverloadedError)


async def test_prompt_too_long_is_context_overflow_with_the_numbers(stub, connect):
    client, _ = connect(max_retries=2)
    stub.enqueue(prompt_too_long(tokens=208656, limit=200000))
    with pytest.raises(ContextOverflow) as caught:
        await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)
    e = caught.value
    assert len(stub.requests) == 1  # a 400 is not retried
    assert "prompt is too long: 208656 tokens > 200000 maximum" in e.message
    assert e.details["provider_message"] == "prompt is too long: 208656 tokens > 200000 maximum"
    assert e.details["prompt_tokens"] == 208656 and e.details["limit"] == 200000
    assert isinstance(e.__cause__, anthropic.BadRequestError)
    assert isinstance(e, ModelError)


async def test_input_plus_max_tokens_over_the_limit_is_context_overflow(stub, connect):
    client, _ = connect()
    message = ("input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000, "
               "decrease input length or `max_tokens` and try again")
    stub.enqueue(error(400, "invalid_request_error", message))
    with pytest.raises(ContextOverflow) as caught:
        await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=20000)
    assert caught.value.details["provider_message"] == message
    assert {k: caught.value.details[k] for k in ("prompt_tokens", "max_tokens", "limit")} == \
        {"prompt_tokens": 190000, "max_tokens": 20000, "limit": 200000}


async def test_request_too_large_is_context_overflow(stub, connect):
    client, _ = connect()
    stub.enqueue(error(413, "request_too_large", "Request exceeds the maximum allowed size"))
    with pytest.raises(ContextOverflow, match="too large.*HTTP 413"):
        await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)


async def test_a_refused_key_is_a_model_error_that_says_so(stub, connect):
    client, _ = connect(api_key="sk-ant-wrong", max_retries=2)
    with pytest.raises(ModelError) as caught:
        await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)
    e = caught.value
    assert type(e) is ModelError and e.code == "MODEL_ERROR"
    assert "refused the API key" in e.message and "HTTP 401" in e.message
    assert "ANTHROPIC_API_KEY" in e.message
    assert "sk-ant-wrong" not in e.message
    assert len(stub.requests) == 1  # not retried
    assert isinstance(e.__cause__, anthropic.AuthenticationError)


async def test_forbidden_is_a_refused_key_too(stub, connect):
    client, _ = connect()
    stub.enqueue(error(403, "permission_error", "Your API key does not have permission"))
    with pytest.raises(ModelError, match="refused the API key.*HTTP 403"):
        await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)


@pytest.mark.parametrize("status,kind,expected,phrase", [
    (429, "rate_limit_error", ModelUnavailable, "rate-limited the request (HTTP 429)"),
    (500, "api_error", ModelUnavailable, "server error (HTTP 500 api_error)"),
    (503, "api_error", ModelUnavailable, "server error (HTTP 503 api_error)"),
    (404, "not_found_error", ModelError, "refused the request (HTTP 404 not_found_error)"),
    (400, "invalid_request_error", ModelError,
     "refused the request (HTTP 400 invalid_request_error)"),
])
async def test_other_statuses(stub, connect, status, kind, expected, phrase):
    client, _ = connect(max_retries=0)
    stub.enqueue(error(status, kind, "model: the provider says no"))
    with pytest.raises(expected) as caught:
        await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)
    assert type(caught.value) is expected
    assert phrase in caught.value.message
    assert "the provider says no" in caught.value.message
    assert caught.value.details["status"] == status


async def test_a_slow_answer_is_a_timeout(stub, connect):
    client, _ = connect(timeout=0.2, max_retries=0)
    stub.enqueue(StubResponse(200, reply("late").body, delay=1.0))
    with pytest.raises(ModelUnavailable, match="did not answer in time with no retries"):
        await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)


async def test_nothing_listening_is_model_unavailable():
    with socket.socket() as s:  # a port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = make_client(AnthropicSettings(api_key=KEY, base_url=f"http://127.0.0.1:{port}",
                                           max_retries=0, timeout=2.0))
    try:
        with pytest.raises(ModelUnavailable, match=f"could not reach Anthropic at "
                                                   f"http://127.0.0.1:{port}") as caught:
            await complete(client, model="m", system="", messages=USER_ONLY, max_tokens=5)
        assert isinstance(caught.value.__cause__, anthropic.APIConnectionError)
    finally:
        await client.close()


def test_the_translator_passes_other_exceptions_and_works_without_async():
    with pytest.raises(KeyError):
        with translate_anthropic_errors():
            raise KeyError("not the SDK's")
    with pytest.raises(ModelUnavailable):
        with translate_anthropic_errors():
            raise ModelUnavailable("already ours")
    with pytest.raises(ModelError, match="the Anthropic client failed"):
        with translate_anthropic_errors():
            raise anthropic.AnthropicError("no credentials")


# --------------------------------------------------------------------------- count_tokens


async def test_count_tokens(stub, connect):
    client, _ = connect()
    messages = [{"role": "user", "content": "x" * 40}]
    n = await count_tokens(client, model="claude-test-1", system="y" * 20, messages=messages)
    assert n == 15  # the stub: (20 + 40) // 4
    [sent] = stub.requests
    assert sent.path == COUNT_TOKENS_PATH
    assert sent.body == {"model": "claude-test-1", "system": "y" * 20, "messages": messages}

    stub.enqueue_count_tokens(12345)
    assert await count_tokens(client, model="m", system="", messages=messages) == 12345

    stub.enqueue_count_tokens(prompt_too_long())
    with pytest.raises(ContextOverflow):
        await count_tokens(client, model="m", system="", messages=messages)


TOOL_TURNS = [
    {"role": "user", "content": "x" * 40},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "t" * 40, "signature": "sig"},
        {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"p": "y" * 30}}]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1",
         "content": [{"type": "text", "text": "z" * 80}]},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "w" * 20}]},
]
# text, thinking, the call's name and input as JSON, the results' texts
TOOL_TURNS_CHARS = 40 + 40 + len("grep") + len(json.dumps({"p": "y" * 30})) + 80 + 20


async def test_the_stub_counts_every_block_a_model_reads(stub, connect):
    """Thinking, tool calls and tool results are input too: an agent conversation's prompt is
    mostly tool results, and compaction's budget and the cache tokens must see them."""
    client, _ = connect()
    n = await count_tokens(client, model="m", system="", messages=TOOL_TURNS)
    assert n == TOOL_TURNS_CHARS // 4
    marked = [*TOOL_TURNS[:-1], {**TOOL_TURNS[-1], "content": [
        *TOOL_TURNS[-1]["content"][:-1],
        {**TOOL_TURNS[-1]["content"][-1], "cache_control": {"type": "ephemeral"}}]}]
    cache = PromptCache()
    assert cache.account({"model": "m", "messages": marked}) == (0, TOOL_TURNS_CHARS // 4, 0)
    assert cache.account({"model": "m", "messages": marked}) == (TOOL_TURNS_CHARS // 4, 0, 0)


async def test_token_counter_counts_the_rendered_prompt(stub, connect):
    client, settings = connect(model="claude-main")
    counter = AnthropicTokenCounter(client, settings)
    rendered = nodes(("system", "You help."), ("user", "question?"), ("assistant", "answer."))
    assert counter.name == "anthropic"
    system, messages = to_messages(rendered)
    assert await counter.count(rendered, {}) == max(1, (len(system) + sum(
        len(m["content"]) for m in messages)) // 4)
    assert stub.requests[0].body == {"model": "claude-main", "system": system,
                                     "messages": messages}


# --------------------------------------------------------------------------- summarizer


async def test_summarizer_relays_the_previous_summary_and_returns_the_text(stub, connect):
    client, settings = connect(model="claude-main", summary_model="claude-small",
                               max_tokens=777)
    summarizer = AnthropicSummarizer(client, settings)
    stub.enqueue(reply("  - user wants X\n- decided Y  ", input_tokens=300, output_tokens=12))
    turns = nodes(("user", "Please build X."), ("assistant", "Building X with Y."),
                  ("tool", "exit code 0"))

    written = await summarizer.summarize(turns, "- user is called Ada")

    # A prompt of its own (no conversation given) marks no breakpoint: nothing is cached.
    assert written == SummaryText("- user wants X\n- decided Y", "anthropic", "claude-small",
                                  300, 12, 0, 0)
    [sent] = stub.requests
    assert sent.body["model"] == "claude-small" and sent.body["max_tokens"] == 777
    assert sent.body["system"] == SUMMARY_SYSTEM
    [message] = sent.body["messages"]
    assert message["role"] == "user"
    text = message["content"]
    assert "- user is called Ada" in text and "summary so far" in text
    assert "nothing already summarized may be lost" in text
    positions = [text.index(s) for s in ("- user is called Ada", "Please build X.",
                                         "Building X with Y.", "exit code 0")]
    assert positions == sorted(positions)
    assert '<turn role="user">' in text and '<turn role="assistant">' in text
    assert '<turn role="tool result">' in text


async def test_summarizer_without_a_previous_summary(stub, connect):
    client, settings = connect()
    stub.enqueue(reply("- the gist"))
    written = await AnthropicSummarizer(client, settings).summarize(
        nodes(("user", "hi"), ("assistant", "hello")), None)
    assert written.text == "- the gist" and written.model == settings.model
    text = stub.requests[0].body["messages"][0]["content"]
    assert "summary so far" not in text and "<turn role=\"user\">\nhi\n</turn>" in text


@pytest.mark.parametrize("answer,phrase", [
    (reply("   "), "empty summary"),
    (reply("- half a sum", stop_reason="max_tokens"), "cut off at max_tokens"),
])
async def test_summarizer_refuses_empty_or_truncated_replies(stub, connect, answer, phrase):
    client, settings = connect()
    stub.enqueue(answer)
    with pytest.raises(ModelError, match=phrase):
        await AnthropicSummarizer(client, settings).summarize(nodes(("user", "hi")), None)


async def test_summarizer_errors_are_translated(stub, connect):
    client, settings = connect(max_retries=0)
    stub.enqueue(overloaded())
    with pytest.raises(ModelUnavailable):
        await AnthropicSummarizer(client, settings).summarize(nodes(("user", "hi")), None)


def test_summary_prompt_is_pure_and_asks_for_the_essentials():
    system, messages = summary_prompt(nodes(("user", "a"), ("assistant", "b")), None)
    for must in ("requests and goals", "decisions", "reasons", "constraints",
                 "open tasks", "asked to be remembered", "no preamble"):
        assert must in system
    assert summary_prompt(nodes(("user", "a"), ("assistant", "b")), None) == (system, messages)


# --------------------------------------------------------------------------- to_messages


def test_root_becomes_the_system_prompt_and_roles_map_through():
    system, messages = to_messages(nodes(("system", "Be kind."), ("user", "hi"),
                                         ("assistant", "hello"), ("user", "bye")))
    assert system == "Be kind."
    assert messages == [{"role": "user", "content": "hi"},
                        {"role": "assistant", "content": "hello"},
                        {"role": "user", "content": "bye"}]


def test_a_summary_is_a_wrapped_user_message_merged_with_the_next_user_turn():
    system, messages = to_messages(nodes(("system", ""), ("summary", "- earlier: X"),
                                         ("user", "go on"), ("assistant", "ok")))
    assert system == ""
    assert messages == [
        {"role": "user", "content": "<summary of the earlier conversation>\n- earlier: X\n"
                                    "</summary>\n\ngo on"},
        {"role": "assistant", "content": "ok"},
    ]


def test_tool_results_are_prefixed_user_messages_and_consecutive_roles_merge():
    _, messages = to_messages(nodes(("system", "s"), ("user", "run it"),
                                    ("assistant", "running"), ("assistant", "still running"),
                                    ("tool", "exit 0"), ("tool", "exit 1"), ("user", "and?")))
    assert messages == [
        {"role": "user", "content": "run it"},
        {"role": "assistant", "content": "running\n\nstill running"},
        {"role": "user", "content": "[tool result]\nexit 0\n\n[tool result]\nexit 1\n\nand?"},
    ]
    roles = [m["role"] for m in messages]
    assert all(a != b for a, b in zip(roles, roles[1:]))


def test_a_leading_assistant_message_gets_a_user_message_before_it():
    _, messages = to_messages(nodes(("system", "s"), ("assistant", "I start."),
                                    ("user", "fine")))
    assert messages == [{"role": "user", "content": "(conversation continues)"},
                        {"role": "assistant", "content": "I start."},
                        {"role": "user", "content": "fine"}]


def test_every_node_content_enters_the_prompt():
    rendered = nodes(("system", "SYS"), ("summary", "SUM"), ("user", "U1"), ("tool", "T1"),
                     ("assistant", "A1"), ("assistant", "A2"), ("user", "U2"))
    system, messages = to_messages(rendered)
    whole = system + "\n".join(m["content"] for m in messages)
    assert all(n.content in whole for n in rendered)
    assert to_messages(rendered) == (system, messages)  # pure: same input, same output
    assert [n.content for n in rendered][0] == "SYS"  # input untouched


# --------------------------------------------------------------------------- settings


def test_settings_from_env():
    def parsed(env):
        return Settings.from_env(env).anthropic

    assert parsed({}) is None
    assert parsed({"ANTHROPIC_API_KEY": ""}) is None
    plain = parsed({"ANTHROPIC_API_KEY": "k"})
    assert plain == AnthropicSettings(api_key="k", base_url=None, model="claude-sonnet-4-6",
                                      summary_model="claude-sonnet-4-6", max_tokens=4096,
                                      context_window=200_000, timeout=120.0, max_retries=2)
    full = parsed({
        "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "CTXDAG_ANTHROPIC_MODEL": "claude-a", "CTXDAG_ANTHROPIC_SUMMARY_MODEL": "claude-b",
        "CTXDAG_ANTHROPIC_MAX_TOKENS": "100", "CTXDAG_ANTHROPIC_CONTEXT_WINDOW": "1000",
        "CTXDAG_ANTHROPIC_TIMEOUT": "2.5", "CTXDAG_ANTHROPIC_MAX_RETRIES": "0",
        "CTXDAG_KEEP_RECENT_TOKENS": "100",
    })
    assert full == AnthropicSettings("k", "http://127.0.0.1:9", "claude-a", "claude-b",
                                     100, 1000, 2.5, 0)
    only_model = parsed({"ANTHROPIC_API_KEY": "k", "CTXDAG_ANTHROPIC_MODEL": "claude-a"})
    assert only_model.summary_model == "claude-a"
    assert "secret-key" not in repr(AnthropicSettings(api_key="secret-key"))
    for name, bad in [("CTXDAG_ANTHROPIC_MAX_TOKENS", "lots"),
                      ("CTXDAG_ANTHROPIC_MAX_RETRIES", "-1"),
                      ("CTXDAG_ANTHROPIC_TIMEOUT", "0")]:
        with pytest.raises(ConfigurationError, match=name):
            parsed({"ANTHROPIC_API_KEY": "k", name: bad})


def test_summary_prompt_asks_for_the_sections_and_carries_focus_instructions():
    from service.llm.prompts import SUMMARY_SECTIONS

    assert SUMMARY_SECTIONS == ("Goal", "Decisions", "Constraints", "Progress", "Open tasks",
                                "Files and artifacts", "Next step")
    turns = nodes(("user", "a"), ("assistant", "b"))
    system, messages = summary_prompt(turns, "- earlier", "Only the schema work.")
    positions = [system.index(f"## {s}\n") for s in SUMMARY_SECTIONS]
    assert positions == sorted(positions)
    text = messages[0]["content"]
    assert "<focus_instructions>\nOnly the schema work.\n</focus_instructions>" in text
    assert "<summary_so_far>\n- earlier\n</summary_so_far>" in text
    plain = summary_prompt(turns, "- earlier")
    assert plain == summary_prompt(turns, "- earlier", None)
    assert "focus_instructions" not in plain[1][0]["content"]
    assert text.startswith(plain[1][0]["content"])


async def test_summarizer_sends_focus_instructions(stub, connect):
    client, settings = connect()
    stub.enqueue(reply("## Goal\n- X"))
    await AnthropicSummarizer(client, settings).summarize(
        nodes(("user", "hi")), None, instructions="Mind the budget.")
    [sent] = stub.requests
    assert "<focus_instructions>\nMind the budget.\n</focus_instructions>" in (
        sent.body["messages"][0]["content"])
    assert "## Files and artifacts\n" in sent.body["system"]
