"""Summarizers see tool calls and their results: the offline one as `called name(input)`
and `name → first line`, the Anthropic prompt as <tool_use>/<tool_result> elements."""
from __future__ import annotations

from service.context.summarizers import OfflineExtractiveSummarizer
from service.llm.prompts import render_transcript, summary_prompt
from tests.unit.test_requests import node


def tool_run():
    return [
        node("user", "Fix the bug in parser.py. It crashes on empty input."),
        node("assistant", [{"type": "thinking", "thinking": "Read it first.", "signature": "s"},
                           {"type": "text", "text": "Reading the file. Then I fix it."},
                           {"type": "tool_use", "id": "t1", "name": "read_file",
                            "input": {"path": "parser.py"}}]),
        node("tool", [{"type": "tool_result", "tool_use_id": "t1",
                       "content": "def parse(s):\n    return s[0]"}]),
        node("assistant", [{"type": "tool_use", "id": "t2", "name": "run_tests",
                            "input": {"path": "tests/", "verbose": True}}]),
        node("tool", [{"type": "tool_result", "tool_use_id": "t2", "is_error": True,
                       "content": "1 failed: test_empty\nIndexError"}]),
    ]


async def test_the_offline_summary_keeps_what_the_tools_did():
    summary = await OfflineExtractiveSummarizer().summarize(tool_run(), None)
    lines = summary.text.splitlines()[1:]
    assert lines == [
        "- user: Fix the bug in parser.py.",
        '- assistant: Reading the file.; called read_file(path="parser.py")',
        "- tool: read_file → def parse(s):",
        '- assistant: called run_tests(path="tests/", verbose=true)',
        "- tool: run_tests failed → 1 failed: test_empty",
    ]


def test_the_summary_prompt_shows_tool_calls_and_results_as_elements():
    transcript = render_transcript(tool_run())
    assert '<tool_use id="t1" name="read_file">{"path": "parser.py"}</tool_use>' in transcript
    assert '<tool_result for="t2" error="true">1 failed: test_empty\nIndexError</tool_result>' \
        in transcript
    assert "Read it first." not in transcript, "thinking stays out of the summary prompt"
    system, _ = summary_prompt(tool_run(), None)
    assert "<tool_use>" in system and "Files and artifacts" in system
