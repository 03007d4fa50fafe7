"""Carry nodes (branch summaries) in the pure parts: how a request frames one, where a
compaction may cut before one, and what the offline summarizer writes for a branch."""
from __future__ import annotations

from service.context.cut import find_cut_index
from service.context.summarizers import BRANCH_HEADER, IGNORED_INSTRUCTIONS, HEADER
from service.context.summarizers import OfflineExtractiveSummarizer
from service.llm.prompts import branch_summary_prompt, render_transcript
from service.store import Role
from service.turns.requests import (
    CARRY_OPEN, SUMMARY_OPEN, anthropic_messages, openai_chat,
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


def test_the_branch_summary_prompt_names_the_branch_left():
    turns = [node("carry", "An earlier branch."), node("user", "Next.")]
    system, messages = branch_summary_prompt(turns, "Keep numbers.")
    assert "left for another branch" in system
    assert '<turn role="summary of another branch">' in render_transcript(turns)
    assert "<focus_instructions>\nKeep numbers." in messages[0]["content"]
