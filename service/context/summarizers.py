"""Summarizers: the covered turns (plus the previous summary, relayed) in, summary text out.

Two real implementations: `OfflineExtractiveSummarizer` (deterministic, no network,
the embedded default) and `AnthropicSummarizer` (service/llm/anthropic_summarizer.py,
used when ANTHROPIC_API_KEY is set).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import AbstractSet, Any, Mapping, Protocol, Sequence

from datetime import datetime

from ..errors import CtxdagError
from ..store import CallRecord, Node, Purpose, Role
from ..model.blocks import Text, ToolResult, ToolUse
from ..model.ids import utcnow
from ..model.models import tools_json


@dataclass(frozen=True)
class SummaryText:
    text: str
    summarizer: str  # which implementation wrote it, stored in the summary's metadata
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_input_tokens: int | None = None  # as the provider reported them
    cache_read_input_tokens: int | None = None


class RequestOptions(Protocol):
    """A turn's request options (service/turns/requests.Options), as compaction hands them
    to the summarizer's Conversation: of them it reads only the tools they offer."""

    tools: Sequence[Any]


@dataclass(frozen=True)
class Conversation:
    """The conversation a compaction cuts (or a branch summary summarizes), as its calls send
    it. A summarizer that asks its model with this very request, the summary instruction
    appended last, reads the conversation's cached prefix (docs/concepts/provenance.md)
    instead of paying for a fresh prompt; its call then reads `nodes`."""

    nodes: tuple[Node, ...]  # the head's render, ROOT first
    retained: tuple[Node, ...]  # its last nodes, kept verbatim below the summary
    media: Mapping[str, str]
    options: RequestOptions | None = None  # the request options of the conversation's calls
    # Segmented: the first newly covered node, when summaries before it stay as they are (the
    # summary covers from there); a branch summary: the branch's first turn, when the
    # conversation holds what came before it; None: from the conversation's beginning.
    covered_from: Node | None = None


def summary_call(summarizer: str, prompt: Sequence[Node], started: datetime,
                 written: SummaryText | None, error: CtxdagError | None = None, *,
                 conversation: Conversation | None = None,
                 head_id: str | None = None) -> CallRecord:
    """The call a summarizer (named `summarizer` when nothing was written) made: it read
    `prompt`; with a `conversation` sent, it was offered that conversation's tools and read
    the render of `head_id`, which it then names."""
    offered = (conversation.options.tools if conversation is not None
               and conversation.options is not None else ())
    return CallRecord.of_prompt(
        Purpose.SUMMARIZE, written.summarizer if written else summarizer,
        written.model if written else None, prompt, started, utcnow(),
        input_tokens=written.input_tokens if written else None,
        output_tokens=written.output_tokens if written else None,
        cache_creation_input_tokens=written.cache_creation_input_tokens if written else None,
        cache_read_input_tokens=written.cache_read_input_tokens if written else None,
        error_code=error.code if error else None,
        error_message=error.message if error else None,
        tools_json=tools_json(offered),
        head_id=head_id if conversation is not None else None)


class Summarizer(Protocol):
    name: str
    # True: it sends the Conversation's request (and its call reads the whole render).
    reads_conversation: bool

    async def summarize(self, turns: Sequence[Node], previous_summary: str | None, *,
                        instructions: str | None = None,
                        verbatim: AbstractSet[str] = frozenset(),
                        conversation: Conversation | None = None) -> SummaryText:
        """Summarizes `turns` (real turns, chain order), absorbing `previous_summary`.

        `instructions`: the user's focus instructions for this compaction (manual
        compaction only), or None. A summarizer that cannot follow them says so in
        its output rather than pretending to.
        `verbatim`: the ids of the covered turns that stay verbatim right after the
        summary (pinned, with the other halves of their tool pairs): those of `turns`, and
        those of the previous summary's segment that were rendered after it.
        `conversation`: given to a summarizer that `reads_conversation`.
        """
        ...

    async def merge(self, summaries: Sequence[Node]) -> SummaryText:
        """One summary of the consecutive segments `summaries` (summary nodes, chain order)
        stand in for: a nested summary under the segmented strategy (docs/segmented.md,
        "Nesting"). It replaces them in the prompt, so nothing of theirs may be lost."""
        ...

    async def summarize_branch(self, turns: Sequence[Node], *,
                               instructions: str | None = None,
                               conversation: Conversation | None = None) -> SummaryText:
        """Summarizes `turns`, a branch's turns below its fork from the branch the summary
        is written into (docs/concepts/annotations.md): what was tried or settled there, for
        a conversation that continues elsewhere. `instructions` as for `summarize`.
        `conversation`: given to a summarizer that `reads_conversation` (and it needs one):
        the request of the branch's tip, its `nodes` ending in the branch's turns from
        `covered_from` on (None: the branch is all of them after ROOT), `retained` empty,
        `options` the tool set in force at the tip."""
        ...


_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
HEADER = "Earlier conversation (offline extractive summary, first sentence of each turn):"
BRANCH_HEADER = ("Another branch of this conversation, left for this one (offline extractive "
                 "summary, first sentence of each turn):")
IGNORED_INSTRUCTIONS = "Focus instructions were given and ignored by the offline summarizer."
_VERBATIM = re.compile(r"\(\d+ pinned turns? stays? verbatim after this summary\.\)")


class OfflineExtractiveSummarizer:
    """Keeps the opening sentence of every turn, one line each, and relays earlier lines.

    Deterministic and offline. It does not understand the text: it extracts. When the
    summary would exceed `max_lines`, the oldest lines are folded into a count so the
    summary stays bounded, and the fold says so. It cannot follow focus instructions:
    when given some, it says in the summary that it ignored them (a note that is not
    relayed into the next summary).
    """

    name = "offline-extractive"
    reads_conversation = False

    def __init__(self, max_line_chars: int = 200, max_lines: int = 200) -> None:
        self.max_line_chars = max_line_chars
        self.max_lines = max_lines

    async def summarize(self, turns: Sequence[Node], previous_summary: str | None, *,
                        instructions: str | None = None,
                        verbatim: AbstractSet[str] = frozenset(),
                        conversation: Conversation | None = None) -> SummaryText:
        folded, lines = _previous_lines(previous_summary)
        names: dict[str, str] = {}  # tool use id -> tool name, for the results that follow
        for turn in turns:
            if turn.role is not Role.SUMMARY:
                lines.append(self._line(turn, names))
        if len(lines) > self.max_lines:
            folded += len(lines) - self.max_lines
            lines = lines[-self.max_lines:]
        body = [HEADER]
        if instructions is not None:
            body.append(IGNORED_INSTRUCTIONS)
        if folded:
            body.append(f"({folded} earlier turns folded away.)")
        if verbatim:
            body.append(f"({len(verbatim)} pinned turn{'s' if len(verbatim) > 1 else ''} "
                        f"stay{'' if len(verbatim) > 1 else 's'} verbatim after this summary.)")
        return SummaryText("\n".join(body + lines), self.name)

    async def merge(self, summaries: Sequence[Node]) -> SummaryText:
        """Relays every line of `summaries`, oldest first, folding the oldest past max_lines."""
        folded, lines = 0, []
        for summary in summaries:
            more_folded, more = _previous_lines(summary.content)
            folded, lines = folded + more_folded, lines + more
        if len(lines) > self.max_lines:
            folded += len(lines) - self.max_lines
            lines = lines[-self.max_lines:]
        body = [HEADER] + ([f"({folded} earlier turns folded away.)"] if folded else [])
        return SummaryText("\n".join(body + lines), self.name)

    async def summarize_branch(self, turns: Sequence[Node], *,
                               instructions: str | None = None,
                               conversation: Conversation | None = None) -> SummaryText:
        # It sends no request (reads_conversation is False): it reads `turns` alone.
        names: dict[str, str] = {}
        lines = [self._line(turn, names) for turn in turns]
        folded = max(0, len(lines) - self.max_lines)
        body = [BRANCH_HEADER]
        if instructions is not None:
            body.append(IGNORED_INSTRUCTIONS)
        if folded:
            body.append(f"({folded} earlier turns folded away.)")
        return SummaryText("\n".join(body + lines[folded:]), self.name)

    def _line(self, turn: Node, names: dict[str, str]) -> str:
        """One line a turn: its opening sentence; a tool call as `called name(input)`, a
        result as `name → its first line` (so the summary keeps what tools did)."""
        uses = [b for b in turn.blocks if isinstance(b, ToolUse)]
        results = [b for b in turn.blocks if isinstance(b, ToolResult)]
        texts = [b.text for b in turn.blocks if isinstance(b, Text)]
        parts = [self._opening(" ".join(texts))] if texts and not results else []
        for use in uses:
            names[use.id] = use.name
            parts.append(f"called {use.name}({self._opening(_arguments(use.input))})")
        for result in results:
            first = next((line for p in result.content if isinstance(p, Text)
                          for line in p.text.splitlines() if line.strip()), "(no text)")
            failed = " failed" if result.is_error else ""
            parts.append(f"{names.get(result.tool_use_id, result.tool_use_id)}{failed} → "
                         f"{self._opening(first)}")
        if not parts:
            parts = [self._opening(turn.content)]
        return f"- {turn.role.value}: " + "; ".join(parts)

    def _opening(self, text: str) -> str:
        opening = _SENTENCE_END.split(" ".join(text.split()), maxsplit=1)[0]
        if len(opening) > self.max_line_chars:
            opening = opening[: self.max_line_chars - 1] + "…"
        return opening


def _arguments(tool_input: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in tool_input.items())


def _previous_lines(previous: str | None) -> tuple[int, list[str]]:
    """The relayed summary's folded count and lines; any other text is kept as one line."""
    if not previous:
        return 0, []
    folded, lines = 0, []
    for line in previous.splitlines():
        match = re.fullmatch(r"\((\d+) earlier turns folded away\.\)", line)
        if line in (HEADER, BRANCH_HEADER, IGNORED_INSTRUCTIONS) or _VERBATIM.fullmatch(line):
            continue
        if match:
            folded += int(match.group(1))
        elif line.startswith("- "):
            lines.append(line)
        elif line.strip():
            lines.append("- earlier summary: " + " ".join(line.split()))
    return folded, lines
