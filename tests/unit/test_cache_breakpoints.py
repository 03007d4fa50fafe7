"""Where the Anthropic request marks cache_control (docs/concepts/provenance.md): the end of
tools/system, the last summary stand-in, the previous call's newest message and the
newest one; never more than four, never a thinking block or an empty text; the TTL as
set. Each body is checked with the SDK's own types (tests/provider_requests.py)."""
from __future__ import annotations

import pytest

from service.config import ConfigurationError, Settings
from service.turns.requests import (
    MAX_BREAKPOINTS, Options, Tool, anthropic_messages, cache_breakpoints, openai_chat,
)
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai, breakpoints
from tests.provider_requests import uncached
from tests.unit.test_requests import TOOLS, agent_render, media_of, node, results, use

EPHEMERAL = {"type": "ephemeral"}
READ = Tool("read_file", "Reads a file.", {"type": "object"})


def marks(body: dict) -> list[tuple]:
    return [(where, at) for where, at, _ in breakpoints(body)]


def test_a_conversation_marks_system_the_previous_newest_and_the_newest_message():
    render = [node("system", "sys"), node("user", "one"), node("assistant", "A1"),
              node("user", "two"), node("assistant", "A2"), node("user", "three")]
    body = anthropic_messages(render, {})
    assert_valid_anthropic(body)
    # "two" is what the previous call ended with; "three" what the next one reads back.
    assert marks(body) == [("system", 0), ("message", (2, 0)), ("message", (4, 0))]
    assert {str(m) for _, _, m in breakpoints(body)} == {str(EPHEMERAL)}
    assert body["messages"][0]["content"] == "one"  # unmarked text stays one string
    assert uncached(body) == uncached(anthropic_messages(render, {}, cache=False))


def test_the_mark_after_the_summary_and_never_more_than_four():
    render = agent_render()
    body = anthropic_messages(render, media_of(render), Options(tools=(READ,)))
    assert_valid_anthropic(body)
    found = marks(body)
    assert len(found) == MAX_BREAKPOINTS
    assert found[0] == ("system", 0)  # covers the tools before it
    assert "cache_control" not in body["tools"][0]
    summary = body["messages"][0]["content"][0]
    assert summary["text"].startswith("<summary of the earlier conversation>")
    assert found[1] == ("message", (0, 0))
    assert found[-1] == ("message", (len(body["messages"]) - 1, 1))  # the image of the newest


def test_with_several_summaries_the_mark_lands_after_the_last_one():
    render = [node("system", "sys"), node("summary", "S1"), node("summary", "S2"),
              node("user", "go on"), node("assistant", "A"), node("user", "and?")]
    body = anthropic_messages(render, {})
    assert_valid_anthropic(body)
    first = body["messages"][0]["content"]
    assert "cache_control" not in first[0] and first[1]["cache_control"] == EPHEMERAL
    assert "S2" in first[1]["text"]
    assert len(marks(body)) <= MAX_BREAKPOINTS


def test_without_a_system_prompt_the_last_tool_carries_the_first_mark():
    render = [node("user", "hi")]
    body = anthropic_messages(render, {}, Options(tools=(READ, Tool("grep", None, {
        "type": "object"}))))
    assert_valid_anthropic(body)
    assert marks(body) == [("tools", 1), ("message", (0, 0))]


def test_a_thinking_block_or_an_empty_text_is_never_marked():
    messages = [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "n", "input": {}},
                    {"type": "thinking", "thinking": "hm", "signature": "c2ln"},
                    {"type": "redacted_thinking", "data": "x"},
                    {"type": "text", "text": ""}]}]
    marked = cache_breakpoints([], [], messages, None)
    assert [b["type"] for b in marked] == ["text", "tool_use"]
    assert marked[1] is messages[1]["content"][0]


def test_agent_turns_mark_tool_results_and_keep_thinking_unmarked():
    render = [node("system", "sys"), node("user", "Read it."),
              node("assistant", [{"type": "thinking", "thinking": "t", "signature": "c2ln"},
                                 *use("t1")]),
              node("tool", results("t1")),
              node("assistant", [{"type": "thinking", "thinking": "u", "signature": "c2ln"},
                                 *use("t2")]),
              node("tool", results("t2"))]
    body = anthropic_messages(render, {}, TOOLS)
    assert_valid_anthropic(body)
    assert marks(body) == [("system", 0), ("message", (2, 0)), ("message", (4, 0))]
    assert body["messages"][4]["content"][0]["type"] == "tool_result"


@pytest.mark.parametrize("ttl, mark", [("5m", EPHEMERAL), ("1h", {"type": "ephemeral",
                                                                   "ttl": "1h"})])
def test_the_ttl_is_the_setting(ttl, mark):
    render = [node("system", "sys"), node("user", "hi")]
    body = anthropic_messages(render, {}, Options(cache_ttl=ttl))
    assert_valid_anthropic(body)
    assert [m for _, _, m in breakpoints(body)] == [mark, mark]


def test_the_ttl_setting_takes_5m_or_1h():
    assert Settings.from_env({}).cache_ttl == "5m"
    assert Settings.from_env({"CTXDAG_CACHE_TTL": "1h"}).cache_ttl == "1h"
    with pytest.raises(ConfigurationError, match="CTXDAG_CACHE_TTL must be one of 5m, 1h"):
        Settings.from_env({"CTXDAG_CACHE_TTL": "10m"})


def test_an_appended_instruction_reads_the_conversations_own_prefix():
    render = [node("system", "sys"), node("summary", "S"), node("user", "one"),
              node("assistant", "A1"), node("user", "two")]
    conversation = anthropic_messages(render, {})
    asked = anthropic_messages(render, {}, appended="Summarize.")
    assert_valid_anthropic(asked)
    last = asked["messages"][-1]["content"]
    assert [b["text"] for b in last] == ["two", "Summarize."]
    assert all("cache_control" in b for b in last)  # the conversation's end, the instruction
    assert len(marks(asked)) <= MAX_BREAKPOINTS
    assert uncached(asked)["messages"][:-1] == uncached(conversation)["messages"][:-1]
    assert uncached(asked)["system"] == uncached(conversation)["system"]


def test_the_openai_request_names_the_session_as_its_cache_key():
    render = agent_render()
    first = openai_chat(render[:3], {})
    later = openai_chat(render, media_of(render))
    assert_valid_openai(later)
    assert first["prompt_cache_key"] == later["prompt_cache_key"] == render[0].session_id
