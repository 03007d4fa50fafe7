"""An agent conversation driven through the turn service, with the model played by the
Anthropic stub (tests/stubs/anthropic_stub.py) on 127.0.0.1.

The conversation is workload 12's (bench/agent.py: `agent_round`): a user prompt, then
rounds of an assistant reply (thinking, a line of text, one tool call or two in parallel)
answered by the tool results (`Turns.submit_tool_results`), and every eighth round a report
and the next user message (`Turns.send_message`). `ScriptedModel` is the stub's default
answer: the next reply of the script for a turn's request, a summary of about
`summary_tokens` for the summarizer's (the conversation's request with the summary
instruction appended), and the API's "prompt is too long" for a prompt over the window, as
the real API refuses one. Marker facts are planted in the first sentence of the first
messages, where an extractive summary keeps them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator

from service.llm.prompts import SUMMARY_SYSTEM
from service.turns.requests import Options, anthropic_messages, options
from service.turns.service import Turns, TurnResult
from tests.stubs.anthropic_stub import (
    StubResponse, estimate_input_tokens, message_text, prompt_too_long, reply, tool_call,
)

from .agent import ROUNDS_PER_EXCHANGE, agent_round
from .content import assistant_text, user_text

TOOLS = options(tools=[
    {"name": "read_file", "description": "Reads a file of the project.",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"}, "pattern": {"type": "string"},
         "context_lines": {"type": "integer"}}, "required": ["path"]}},
    {"name": "grep", "description": "Searches the project's files.",
     "input_schema": {"type": "object", "properties": {
         "path": {"type": "string"}, "pattern": {"type": "string"},
         "context_lines": {"type": "integer"}}, "required": ["pattern"]}},
])
SYSTEM_PROMPT = ("You are a coding agent working in the user's repository. Read before you "
                 "change anything, keep changes small, and say what you did. ") * 8


def code(k: int) -> str:
    """Marker fact k's code, found in a prompt's bytes only if the fact is there."""
    return f"VC{k:02d}-{(k * 7919) % 9973:04d}"


def marker(k: int) -> str:
    """Marker fact k: one sentence, so the extractive summarizer keeps it whole."""
    return f"Marker fact {k:02d}: the vault code of module {k} is {code(k)}."


def markers_in(nodes: Any, count: int) -> int:
    """How many of the `count` marker facts a rendered prompt holds (its request's bytes)."""
    text = json.dumps(anthropic_messages(nodes, {}, allow_open=True, cache=False))
    return sum(code(k) in text for k in range(count))


def _summary(k: int, tokens: int) -> str:
    lines = [f"## Goal\nCompaction {k}: the user's refactoring of the project goes on.",
             "## Progress"]
    j = 0
    while sum(len(line) + 1 for line in lines) < tokens * 4:
        lines.append(f"- step {j} of segment {k}: read src/module_{j % 40}.py and grep'd "
                     f"handler_{j}; nothing changed yet.")
        j += 1
    return "\n".join(lines)[: tokens * 4]


@dataclass
class ScriptedModel:
    """The stub's default answer (see the module docstring)."""

    window: int
    summary_tokens: int
    pending: StubResponse | None = None  # the script's next reply, set before each turn
    summaries: int = 0

    def __call__(self, body: dict) -> StubResponse:
        tokens = estimate_input_tokens(body)
        if tokens > self.window:
            return prompt_too_long(tokens, self.window)
        # The summarizer's: its instruction appended last, or its own prompt's system.
        asked = message_text({"system": body.get("system"),
                              "messages": (body.get("messages") or [])[-1:]})
        if any(SUMMARY_SYSTEM in text for text in asked):
            self.summaries += 1
            return reply(_summary(self.summaries, self.summary_tokens))
        if self.pending is None:
            raise RuntimeError("the scripted model was asked for a reply it was not given")
        return self.pending


@dataclass
class Step:
    messages: int  # the conversation's messages after this step (ROOT and summaries not counted)
    result: TurnResult


@dataclass
class Script:
    """The conversation's content, message by message; markers go into the first sentence
    of user and assistant messages among the first `marker_span`, until `markers` are."""

    markers: int
    marker_span: int
    planted: list[int] = field(default_factory=list)  # each marker's message (0-based)

    def _plant(self, index: int, text: str) -> str:
        if index >= self.marker_span or len(self.planted) >= self.markers:
            return text
        self.planted.append(index)
        return f"{marker(len(self.planted) - 1)} {text}"

    def user(self, index: int, i: int) -> str:
        return self._plant(index, user_text(i))

    def round(self, index: int, i: int) -> StubResponse:
        blocks, _ = agent_round(i)
        thinking, text, *uses = blocks
        return tool_call(*((u["id"], u["name"], u["input"]) for u in uses),
                         text=self._plant(index, text["text"]),
                         thinking=(thinking["thinking"], thinking["signature"]))

    def report(self, index: int, i: int) -> StubResponse:
        return reply(self._plant(index, assistant_text(i)))


async def converse(turns: Turns, session_id: str, model: ScriptedModel, script: Script,
                   messages: int, tools: Options = TOOLS) -> AsyncIterator[Step]:
    """Drives the conversation until it holds `messages` messages, or a turn fails (its
    step is the last one yielded, with the result's error)."""
    written, i = 0, 0
    model.pending = script.round(written + 1, i)
    result = await turns.send_message(session_id, script.user(written, i), options=tools)
    while True:
        written += 1 + (result.reply is not None)
        yield Step(written, result)
        if result.reply is None or written >= messages:
            return
        if result.open_tool_use_ids:
            _, results = agent_round(i)
            i += 1
            model.pending = (script.report(written + 1, i) if i % ROUNDS_PER_EXCHANGE == 0
                             else script.round(written + 1, i))
            result = await turns.submit_tool_results(session_id, results, options=tools)
        else:
            model.pending = script.round(written + 1, i)
            result = await turns.send_message(session_id, script.user(written, i),
                                              options=tools)
