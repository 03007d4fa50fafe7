"""Prompts are functions that return (system, messages) for the Messages API.

No SDK here: these are pure, so tests can read exactly what a model would be sent.
"""
from __future__ import annotations

from typing import Sequence

from ..store.models import Node, Role

SUMMARY_SYSTEM = """\
You summarize an earlier part of a conversation between a user and an AI assistant. \
Your summary replaces those turns: the assistant will continue the conversation \
seeing only your summary and the turns after it, so anything you leave out is lost.

Keep:
- the user's requests and goals, in their own terms;
- decisions made, and the reasons for them;
- facts, names, numbers and constraints that were established;
- open tasks and unanswered questions;
- anything the user asked to be remembered, verbatim where it matters.

Be terse: short bullet points grouped under these headings, no filler. Drop small talk \
and restated content. Write only the summary: no preamble, no closing remarks."""

_ROLE_LABELS = {
    Role.SYSTEM: "system",
    Role.USER: "user",
    Role.ASSISTANT: "assistant",
    Role.TOOL: "tool result",
    Role.SUMMARY: "earlier summary",
}


def render_transcript(turns: Sequence[Node]) -> str:
    """The turns in order, each labeled with its role; the whole content of every turn."""
    return "\n\n".join(
        f'<turn role="{_ROLE_LABELS[turn.role]}">\n{turn.content}\n</turn>' for turn in turns)


def summary_prompt(turns: Sequence[Node],
                   previous_summary: str | None) -> tuple[str, list[dict]]:
    """(system, messages) asking for a summary of `turns` that absorbs `previous_summary`."""
    transcript = render_transcript(turns)
    if previous_summary:
        text = (
            "Here is the summary so far of the conversation's beginning:\n"
            f"<summary_so_far>\n{previous_summary}\n</summary_so_far>\n\n"
            "These are the turns that followed it, in order:\n"
            f"<transcript>\n{transcript}\n</transcript>\n\n"
            "Write one new summary covering both. It replaces the summary so far, so "
            "absorb that summary fully into the new one: nothing already summarized may "
            "be lost. Update anything the later turns changed or settled."
        )
    else:
        text = (
            "These are the turns to summarize, in order:\n"
            f"<transcript>\n{transcript}\n</transcript>\n\n"
            "Write the summary."
        )
    return SUMMARY_SYSTEM, [{"role": "user", "content": text}]
