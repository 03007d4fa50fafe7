"""Prompts are functions that return (system, messages) for the Messages API.

No SDK here: these are pure, so tests can read exactly what a model would be sent.
"""
from __future__ import annotations

from typing import AbstractSet, Sequence

from ..model.blocks import RedactedThinking, Thinking, ToolResult, ToolUse, text_of
from ..model.models import Node, Role
from ..turns.requests import tool_result_text, tool_use_text

SUMMARY_SECTIONS = (
    "Goal",
    "Decisions",
    "Constraints",
    "Progress",
    "Open tasks",
    "Files and artifacts",
    "Next step",
)

SUMMARY_SYSTEM = """\
You summarize an earlier part of a conversation between a user and an AI assistant. \
Your summary replaces those turns: the assistant will continue the conversation \
seeing only your summary and the turns after it, so anything you leave out is lost.

Write the summary under exactly these headings, in this order (write "None." under a \
heading with nothing to report):

## Goal
The user's requests and goals, in their own terms.
## Decisions
The decisions made, and the reasons for them.
## Constraints
Facts, names, numbers, preferences and constraints that were established, and \
anything the user asked to be remembered, verbatim where it matters.
## Progress
What has been done or settled so far.
## Open tasks
The open tasks and unanswered questions.
## Files and artifacts
Files, paths, commands, documents and other artifacts read, created or changed, \
with what happened to each: the tool calls in the transcript (<tool_use> with their \
inputs, <tool_result> with their outputs and errors) say which.
## Next step
What the assistant was about to do next, if anything.

Be terse: short bullet points under these headings, no filler. Drop small talk \
and restated content. Write only the summary: no preamble, no closing remarks."""

_ROLE_LABELS = {
    Role.SYSTEM: "system",
    Role.USER: "user",
    Role.ASSISTANT: "assistant",
    Role.TOOL: "tool result",
    Role.SUMMARY: "earlier summary",
    Role.CARRY: "summary of another branch",
}


def render_transcript(turns: Sequence[Node], pinned: AbstractSet[str] = frozenset()) -> str:
    """The turns in order, each labeled with its role (and `pinned="true"` when it stays
    verbatim after the summary); the whole content of every turn, its tool calls and
    results as elements of their own (thinking is left out)."""
    return "\n\n".join(
        f'<turn role="{_ROLE_LABELS[turn.role]}"{_PINNED if turn.id in pinned else ""}>\n'
        f"{_body(turn)}\n</turn>" for turn in turns)


_PINNED = ' pinned="true"'


def _body(turn: Node) -> str:
    parts = []
    for block in turn.blocks:
        if isinstance(block, ToolUse):
            parts.append(tool_use_text(block))
        elif isinstance(block, ToolResult):
            parts.append(tool_result_text(block, text_of(block.content)))
        elif not isinstance(block, (Thinking, RedactedThinking)):
            parts.append(text_of([block]))
    return "\n".join(parts) or turn.content


def summary_prompt(turns: Sequence[Node], previous_summary: str | None,
                   instructions: str | None = None,
                   verbatim: AbstractSet[str] = frozenset()) -> tuple[str, list[dict]]:
    """(system, messages) asking for a summary of `turns` that absorbs `previous_summary`,
    following the user's focus `instructions` when there are any, and told which covered
    turns (`verbatim`, ids) the assistant keeps reading verbatim after it."""
    transcript = render_transcript(turns, verbatim)
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
    earlier = len(verbatim - {turn.id for turn in turns})
    if verbatim:
        text += (
            "\n\nThe user pinned some of these messages: "
            + ('the turns marked pinned="true"' if len(verbatim) > earlier else "")
            + (" and " if len(verbatim) > earlier and earlier else "")
            + (f"{earlier} earlier turn{'s' if earlier > 1 else ''} of the summary so far"
               if earlier else "")
            + " stay in the conversation verbatim, right after your summary, so the "
            "assistant keeps reading them in full. Do not restate them; keep what the rest "
            "of the conversation needs to make sense of them."
        )
    return SUMMARY_SYSTEM, [{"role": "user", "content": text + _focus(instructions)}]


BRANCH_SUMMARY_SYSTEM = SUMMARY_SYSTEM.replace(
    "You summarize an earlier part of a conversation between a user and an AI assistant. "
    "Your summary replaces those turns: the assistant will continue the conversation "
    "seeing only your summary and the turns after it, so anything you leave out is lost.",
    "You summarize a branch of a conversation between a user and an AI assistant: turns "
    "the user tried and then left for another branch of the same conversation. Your "
    "summary is carried into that other branch, which never saw these turns: write what "
    "was tried, learned, decided or produced there, so the assistant can build on it.")


def branch_summary_instruction(branch_from: Node | None, instructions: str | None = None,
                               unanswered: int = 0) -> str:
    """The user text appended to the request of the branch left (its tip's own request, so
    the request up to it reads that conversation's cache): what to summarize of the
    conversation above, under the headings of BRANCH_SUMMARY_SYSTEM, following the user's
    `instructions` when there are any. `branch_from`: the branch's first message, named by
    its opening, when the conversation above holds what came before it (shared with the
    branch the summary is carried into); None: all of it is the branch. `unanswered`: how
    many tool calls the branch ends in, left without results (sent as text)."""
    if branch_from is None:
        span = ("the conversation above, from its beginning: all of it is the branch that was "
                "left (what came before it is shared with the branch your summary is carried "
                "into, and not shown)")
    else:
        span = ("the branch that was left: the conversation above from the message that "
                f"begins \u201c{_opening(branch_from, 200)}\u201d to its end (what comes "
                "before that message is shared with the branch your summary is carried into, "
                "which has it already: leave it out)")
    text = (
        "Stop here: this message is not a turn of the conversation, and your answer is not "
        "a reply to it. Write text only, and call no tool.\n\n"
        f"{BRANCH_SUMMARY_SYSTEM}\n\nSummarize {span}.")
    if unanswered:
        text += (f"\n\nThe branch ends in {unanswered} tool call"
                 f"{'s' if unanswered > 1 else ''} that never got a result (shown as text "
                 "above): the user left the branch before they ran.")
    if instructions is not None:
        text += ("\n\nThe user gave these instructions for this summary:\n"
                 f"<focus_instructions>\n{instructions}\n</focus_instructions>\n"
                 "Follow them in what you emphasize and keep in detail, within the headings "
                 "above.")
    return text


def summary_instruction(summarized_before: bool, retained: Sequence[Node],
                        instructions: str | None = None,
                        pinned: Sequence[Node] = (),
                        covered_from: Node | None = None) -> str:
    """The user text appended to the conversation's own request (so the request up to it
    reads the conversation's cache): what to summarize of the conversation above, under
    the headings of SUMMARY_SYSTEM. `retained`: the nodes kept verbatim after the summary,
    named by the opening of the first; `pinned`: covered messages the user pinned, which
    stay verbatim right after the summary too, named by their openings. `covered_from`:
    the first message to summarize when the render holds more before it (segmented: earlier
    stand-ins), which stays as it is."""
    span = "the conversation above, from its beginning"
    if covered_from is not None:
        span = ("the conversation above from the message that begins "
                f"\u201c{_opening(covered_from, 200)}\u201d (what comes before it stays as it "
                "is: leave it out)")
    if summarized_before:
        span += (" (its opening summary of still earlier turns included: absorb that summary "
                 "fully, nothing already summarized may be lost)")
    if retained:
        opening = _opening(retained[0], 200)
        span += (f", up to the message that begins \u201c{opening}\u201d: that message and "
                 "everything after it stay verbatim after your summary, so leave them out")
    return (
        "Stop here: this message is not a turn of the conversation, and your answer is not "
        "a reply to it. Write text only, and call no tool.\n\n"
        f"{SUMMARY_SYSTEM}\n\nSummarize {span}." + _pinned(pinned) + _focus(instructions))


MERGE_SYSTEM = SUMMARY_SYSTEM.replace(
    "You summarize an earlier part of a conversation between a user and an AI assistant. "
    "Your summary replaces those turns: the assistant will continue the conversation "
    "seeing only your summary and the turns after it, so anything you leave out is lost.",
    "You merge consecutive summaries of the earlier parts of a conversation between a user "
    "and an AI assistant into one summary. Yours replaces them: the assistant will continue "
    "the conversation seeing only your summary, the later summaries and the turns after "
    "them, so anything of theirs you leave out is lost.")


def merge_prompt(summaries: Sequence[Node]) -> tuple[str, list[dict]]:
    """(system, messages) asking for one summary of consecutive `summaries`, oldest first."""
    parts = "\n".join(f"<summary index=\"{i}\">\n{s.content}\n</summary>"
                      for i, s in enumerate(summaries, 1))
    text = (f"These are {len(summaries)} consecutive summaries, oldest first:\n{parts}\n\n"
            "Write one summary covering all of them. Where a later one changed or settled "
            "what an earlier one says, keep the later state.")
    return MERGE_SYSTEM, [{"role": "user", "content": text}]


def _opening(node: Node, length: int) -> str:
    return " ".join((node.content or "").split())[:length]


def _pinned(pinned: Sequence[Node]) -> str:
    if not pinned:
        return ""
    openings = "; ".join("\u201c" + " ".join((n.content or "").split())[:80] + "\u201d"
                         for n in pinned)
    return ("\n\nThe user pinned these messages of the part you summarize; they stay in the "
            f"conversation verbatim, right after your summary: {openings}. Do not restate "
            "them; keep what the rest of the conversation needs to make sense of them.")


def _focus(instructions: str | None) -> str:
    if instructions is None:
        return ""
    return (
        "\n\nThe user gave these focus instructions for this summary:\n"
        f"<focus_instructions>\n{instructions}\n</focus_instructions>\n"
        "Follow them in what you emphasize and keep in detail, within the headings "
        "above. They do not permit dropping the goal, constraints or open tasks.")
