"""Carry nodes (branch summaries) in the pure parts: how a request frames one, where a
compaction may cut before one, and what the offline summarizer writes for a branch."""
from __future__ import annotations

from service.context.cut import find_cut_index
from service.context.summarizers import BRANCH_HEADER, IGNORED_INSTRUCTIONS, HEADER
from service.context.summarizers import OfflineExtractiveSummarizer
import pytest

from service.errors import BadInput
from service.llm.prompts import BRANCH_SUMMARY_SYSTEM, branch_summary_instruction, render_transcript
from service.store import Role
from service.turns.requests import (
    CARRY_OPEN, SUMMARY_OPEN, Options, Tool, anthropic_messages, openai_chat,
)
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai, uncached
from tests.unit.test_cut_and_summarizer import node as sized
from tests.unit.test_requests import node, results, use


def test_a_carry_node_is_sent_as_the_users_text_framed_as_another_branchs_summary():
    render = [node("system", "Be terse."), node("summary", "Earlier: a plan."),
              node("user", "Go on."), node("assistant", use("toolu_c1")),
              node("tool", results("toolu_c1")), node("assistant", "Done."),
              node("carry", "Another branch: the second plan failed."), node("user", "So?")]
    body = anthropic_messages(render, {})
    assert_valid_anthropic(body)
    assert_valid_openai(openai_chat(render, {}))
    body = uncached(body)  # the breakpoints aside (tests/unit/test_cache_breakpoints.py)
    last = body["messages"][-1]
    assert last["role"] == "user" and last["content"] == (
        f"{CARRY_OPEN}\nAnother branch: the second plan failed.\n</summary>\n\nSo?")
    assert CARRY_OPEN != SUMMARY_OPEN and body["messages"][0]["content"].startswith(SUMMARY_OPEN)
    # Alone after ROOT it is a request too: the first message is the user's.
    assert_valid_anthropic(anthropic_messages(render[:1] + render[6:7], {}))


def test_a_cut_may_open_the_retained_tail_on_a_carry_node():
    history = [sized(1, Role.USER), sized(2, Role.ASSISTANT), sized(3, Role.CARRY),
               sized(4, Role.ASSISTANT), sized(5, Role.USER), sized(6, Role.ASSISTANT)]
    # The tail that fits (30 tokens) starts at 4, an assistant reply: it moves forward to
    # the next user turn; one that starts on the carry node opens there.
    assert find_cut_index(history, 30) == 4
    assert find_cut_index(history, 40) == 2


async def test_the_offline_summary_of_a_branch_says_what_it_is():
    turns = [node("user", "Try the cache. It may help."), node("assistant", use("toolu_c2")),
             node("tool", results("toolu_c2")), node("assistant", use("toolu_c3"))]
    written = await OfflineExtractiveSummarizer().summarize_branch(turns,
                                                                   instructions="Be brief.")
    lines = written.text.splitlines()
    assert lines[:2] == [BRANCH_HEADER, IGNORED_INSTRUCTIONS] and BRANCH_HEADER != HEADER
    assert lines[2] == "- user: Try the cache."
    assert "called read_file" in lines[3] and "read_file → body of toolu_c2" in lines[4]
    assert len(lines) == 6  # the last tool use, left open on that branch, is text too


def test_the_branch_summary_instruction_names_where_the_branch_begins():
    turns = [node("carry", "An earlier branch."), node("user", "Next, the second plan.")]
    text = branch_summary_instruction(turns[1], "Keep numbers.")
    assert "left for another branch" in BRANCH_SUMMARY_SYSTEM and BRANCH_SUMMARY_SYSTEM in text
    assert "from the message that begins \u201cNext, the second plan.\u201d" in text
    assert "<focus_instructions>\nKeep numbers." in text
    assert "never got a result" not in text
    whole = branch_summary_instruction(None, None, unanswered=2)
    assert "all of it is the branch that was left" in whole
    assert "focus_instructions" not in whole and "2 tool calls that never got a result" in whole
    assert '<turn role="summary of another branch">' in render_transcript(turns)


def test_a_conversation_left_in_open_tool_uses_is_a_request_once_an_instruction_follows():
    """The summarizer's request of a branch left mid-call: the open uses go as text (the
    instruction after them answers nothing), the answered ones stay blocks."""
    tools = (Tool("read_file", "Reads.", {"type": "object"}),)
    render = [node("system", "Be terse."), node("user", "Read a."),
              node("assistant", use("toolu_k1")), node("tool", results("toolu_k1")),
              node("assistant", [{"type": "thinking", "thinking": "Now b.", "signature": "c2ln"},
                                 *use("toolu_k2")])]
    with pytest.raises(BadInput, match="toolu_k2"):
        anthropic_messages(render, {}, Options(tools=tools))
    body = anthropic_messages(render, {}, Options(tools=tools), appended="Summarize.")
    assert_valid_anthropic(body)
    body = uncached(body)
    assert body["tools"][0]["name"] == "read_file"
    kinds = [[b["type"] for b in m["content"]] if isinstance(m["content"], list)
             else "text" for m in body["messages"]]
    assert kinds == ["text", ["tool_use"], ["tool_result"], ["thinking", "text"], "text"]
    assert body["messages"][3]["content"][1]["text"].startswith(
        '<tool_use id="toolu_k2" name="read_file">')
    assert body["messages"][-1] == {"role": "user", "content": "Summarize."}
