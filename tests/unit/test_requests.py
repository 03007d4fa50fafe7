"""Renders as provider requests: each body checked with the providers' own SDK types and
the pairing rules (tests/provider_requests.py), and its mapping of every block kind."""
from __future__ import annotations

import base64
from datetime import datetime, timezone
from itertools import count

import pytest

from service.errors import BadInput
from service.model import blocks
from service.store import Node, Role
from service.turns.requests import (
    CONTINUES, Options, Tool, ToolChoice, anthropic_messages, open_tool_uses, openai_chat,
)
from tests.provider_requests import (
    assert_valid_anthropic, assert_valid_openai, problems_anthropic, problems_openai, uncached,
)
from tests.unit.test_blocks import LIMITS, png

_ids = count(1)


def node(role: str, content: str | list) -> Node:
    if isinstance(content, str):
        text, stored = content, None
    else:
        parsed = blocks.parse(content, role, LIMITS)
        text, stored = blocks.text_of(parsed.blocks), blocks.dumps(parsed.blocks)
    n = next(_ids)
    return Node(id=f"nod_{n}", session_id="ses_1", role=Role(role), content=text,
                created_at=datetime.now(timezone.utc), tokens=1, metadata={}, seq=n, depth=n,
                predecessor_id=None, caller_id=None, side_branch=False, deleted_at=None,
                blocks_json=stored)


def use(*ids: str) -> list[dict]:
    return [{"type": "tool_use", "id": i, "name": "read_file", "input": {"path": f"{i}.py"}}
            for i in ids]


def results(*ids: str, error: bool = False) -> list[dict]:
    return [{"type": "tool_result", "tool_use_id": i, "content": f"body of {i}",
             "is_error": error} for i in ids]


IMAGE = base64.b64encode(png(8, 8)).decode()


def agent_render() -> list[Node]:
    return [
        node("system", "You are terse."),
        node("summary", "Earlier: the user asked about a.py."),
        node("user", "Read both files."),
        node("assistant", [{"type": "thinking", "thinking": "Two reads.", "signature": "c2ln"},
                           {"type": "text", "text": "Reading."}, *use("t1", "t2")]),
        node("tool", [*results("t1"), *results("t2", error=True),
                      {"type": "text", "text": "(second failed)"}]),
        node("assistant", use("t3")),
        node("tool", [{"type": "tool_result", "tool_use_id": "t3", "content": [
            {"type": "text", "text": "screenshot"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": IMAGE}}]}]),
        node("assistant", "Done: a.py reads fine, b.py is missing."),
        node("user", [{"type": "text", "text": "And this?"},
                      {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                   "data": IMAGE}}]),
    ]


def media_of(nodes: list[Node]) -> dict[str, str]:
    found = {}
    for n in nodes:
        for digest in blocks.media_hashes(n.blocks):
            found[digest] = IMAGE
    return found


TOOLS = Options(model="claude-x", max_tokens=512,
                tools=(Tool("read_file", "Reads a file.", {"type": "object", "properties": {
                    "path": {"type": "string"}}, "required": ["path"]}),),
                tool_choice=ToolChoice("auto"))


def test_an_agent_render_is_a_valid_anthropic_request():
    render = agent_render()
    body = anthropic_messages(render, media_of(render), TOOLS)
    assert_valid_anthropic(body)
    body = uncached(body)
    assert body["system"] == "You are terse."
    assert [m["role"] for m in body["messages"]] == [
        "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    summary_and_question = body["messages"][0]["content"]
    assert summary_and_question.startswith("<summary of the earlier conversation>\n")
    assert summary_and_question.endswith("</summary>\n\nRead both files.")
    thinking = body["messages"][1]["content"][0]
    assert thinking == {"type": "thinking", "thinking": "Two reads.", "signature": "c2ln"}
    answers = body["messages"][2]["content"]
    assert [b["type"] for b in answers] == ["tool_result", "tool_result", "text"]
    assert answers[1]["is_error"] is True and "is_error" not in answers[0]
    assert body["tools"][0]["input_schema"]["required"] == ["path"]
    assert body["tool_choice"] == {"type": "auto"}


def test_an_agent_render_is_a_valid_openai_request():
    render = agent_render()
    body = openai_chat(render, media_of(render), TOOLS)
    assert_valid_openai(body)
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["system", "user", "user", "assistant", "tool", "tool", "user", "assistant",
                     "tool", "user", "assistant", "user"]
    call = body["messages"][3]
    assert call["content"] == "Reading."
    assert [c["function"]["arguments"] for c in call["tool_calls"]] == [
        '{"path": "t1.py"}', '{"path": "t2.py"}']
    assert body["messages"][5]["content"].startswith("[error] ")
    assert body["messages"][9]["content"][0]["image_url"]["url"].startswith(
        "data:image/png;base64,")
    assert body["tools"][0]["function"]["parameters"]["required"] == ["path"]
    assert body["max_completion_tokens"] == 512


def test_a_text_conversation_is_sent_as_strings_as_before_blocks_existed():
    render = [node("system", "sys"), node("assistant", "I start."), node("user", "hi"),
              node("tool", "plain tool output"), node("assistant", "ok")]
    body = anthropic_messages(render, {})
    assert_valid_anthropic(body)
    assert uncached(body) == {"system": "sys", "messages": [
        {"role": "user", "content": CONTINUES},
        {"role": "assistant", "content": "I start."},
        {"role": "user", "content": "hi\n\n[tool result]\nplain tool output"},
        {"role": "assistant", "content": "ok"}]}
    assert_valid_anthropic(body)
    assert_valid_openai(openai_chat(render, {}))


def test_a_head_with_open_tool_uses_is_not_a_request_and_says_which():
    render = [node("system", "s"), node("user", "go"), node("assistant", use("t9", "t8"))]
    assert open_tool_uses(render) == ["t9", "t8"]
    for build in (anthropic_messages, openai_chat):
        with pytest.raises(BadInput) as refused:
            build(render, {})
        assert "2 open tool uses (t9, t8)" in refused.value.message


@pytest.mark.parametrize("choice, anthropic, openai", [
    (ToolChoice("any"), {"type": "any"}, "required"),
    (ToolChoice("none"), {"type": "none"}, "none"),
    (ToolChoice("tool", "read_file"), {"type": "tool", "name": "read_file"},
     {"type": "function", "function": {"name": "read_file"}}),
])
def test_tool_choice_in_both_formats(choice, anthropic, openai):
    render = [node("system", "s"), node("user", "go")]
    options = Options(tools=TOOLS.tools, tool_choice=choice)
    a, o = anthropic_messages(render, {}, options), openai_chat(render, {}, options)
    assert a["tool_choice"] == anthropic and o["tool_choice"] == openai
    assert_valid_anthropic(a)
    assert_valid_openai(o)


def test_documents_in_both_formats():
    pdf = base64.b64encode(b"%PDF-1.4 /Type /Page").decode()
    text = base64.b64encode("plain words".encode()).decode()
    render = [node("system", "s"), node("user", [
        {"type": "document", "title": "spec.pdf",
         "source": {"type": "base64", "media_type": "application/pdf", "data": pdf}},
        {"type": "document", "source": {"type": "base64", "media_type": "text/plain",
                                        "data": text}},
        {"type": "document", "source": {"type": "url", "url": "https://a.io/b.pdf"}},
        {"type": "text", "text": "Compare them."}])]
    media = {d: v for d, v in zip(blocks.media_hashes(render[1].blocks), (pdf, text))}
    a = anthropic_messages(render, media)
    assert_valid_anthropic(a)
    sources = [b["source"] for b in a["messages"][0]["content"][:3]]
    assert sources == [{"type": "base64", "media_type": "application/pdf", "data": pdf},
                       {"type": "text", "media_type": "text/plain", "data": "plain words"},
                       {"type": "url", "url": "https://a.io/b.pdf"}]
    o = openai_chat(render, media)
    assert_valid_openai(o)
    parts = o["messages"][1]["content"]
    assert parts[0] == {"type": "file", "file": {
        "filename": "spec.pdf", "file_data": f"data:application/pdf;base64,{pdf}"}}
    assert parts[1] == {"type": "text", "text": "plain words"}


def test_media_the_render_names_but_nobody_supplied_is_refused():
    render = [node("system", "s"), node("user", [{"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": IMAGE}}])]
    with pytest.raises(BadInput, match="is not stored"):
        anthropic_messages(render, {})


def test_the_independent_checks_catch_what_the_providers_refuse():
    """The checker itself: an orphan result, an unanswered use, a duplicate id."""
    orphan = {"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "x", "content": "r"}]}]}
    assert problems_anthropic(orphan)
    unanswered = {"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "n",
                                           "input": {}}]},
        {"role": "user", "content": "never mind"}]}
    assert problems_anthropic(unanswered)
    twice = {"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "n",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "n",
                                           "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]}]}
    assert any("used twice" in p for p in problems_anthropic(twice))
    assert problems_openai({"messages": [{"role": "tool", "tool_call_id": "a", "content": "x"}]})
    assert problems_openai({"messages": [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "n", "arguments": "{}"}}]},
        {"role": "user", "content": "hm"}]})
    with pytest.raises(AssertionError):
        assert_valid_anthropic({"messages": [{"role": "user", "content": "x"}], "bogus": 1})


def test_a_render_of_root_alone_is_no_anthropic_request():
    render = [node("system", "You are terse.")]
    with pytest.raises(BadInput, match="only the system prompt"):
        anthropic_messages(render, {})
    assert_valid_openai(openai_chat(render, {}))


@pytest.mark.parametrize("mode", ["auto", "none"])
def test_a_tool_choice_without_tools_is_left_out_as_the_apis_require(mode):
    render = [node("system", "s"), node("user", "go")]
    options = Options(tool_choice=ToolChoice(mode))
    a, o = anthropic_messages(render, {}, options), openai_chat(render, {}, options)
    assert "tool_choice" not in a and "tools" not in a
    assert "tool_choice" not in o and "tools" not in o
    assert_valid_anthropic(a)
    assert_valid_openai(o)
