"""Workload 13, a followed file's growth by the session's length: what one poll of
`--follow` costs (service/transcripts/follow.py: reading the lines gained, the document,
storing what changed) when a user prompt is appended to a Claude Code, Pi or Codex file of
10,000 and of 40,000 entries (Sizes.growth_entries). Each file is first imported by its follower, then grown one
prompt at a time GROWTHS times; the row is the median poll after the first two (whose
statements may be planned). A growth that costs what it adds, not the session, shows as
the same time at both lengths.

The Pi and Codex files are written as their tools write a tool-heavy session: a prompt, a
call, its result of about 500 characters, the reply (Codex's rollouts with the turn
context and token counts between).
"""
from __future__ import annotations

import json
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Callable

from service.transcripts.follow import Follower

from .core import Bench
from .transcripts import S13, SESSION, claude_code_transcript

GROWTHS = 10
_RESULT = "a line of the file that was read\n" * 15


def _at(i: int) -> str:
    return f"2026-03-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"


def pi_transcript(entries: int, session: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": session,
                                      "timestamp": _at(0), "cwd": "/work/app"}]
    parent = None
    while len(records) + 4 <= entries:  # whole rounds: the file ends with a reply
        k = len(records)
        reply = {"api": "anthropic-messages", "provider": "anthropic", "model": "claude-x",
                 "usage": {"input": 1, "output": 1}}
        for message in (
                {"role": "user", "content": f"Step {k}: read the next file.", "timestamp": 1},
                {"role": "assistant", "content": [{"type": "toolCall", "id": f"call_{k}",
                                                   "name": "read",
                                                   "arguments": {"path": f"src/m{k}.py"}}],
                 "stopReason": "toolUse", **reply},
                {"role": "toolResult", "toolCallId": f"call_{k}", "toolName": "read",
                 "content": [{"type": "text", "text": _RESULT}], "isError": False},
                {"role": "assistant", "content": [{"type": "text", "text": f"Read m{k}.py."}],
                 "stopReason": "stop", **reply}):
            key = f"e{len(records)}"
            records.append({"type": "message", "id": key, "parentId": parent,
                            "timestamp": _at(len(records)), "message": message})
            parent = key
    return records


def pi_prompt(records: list[dict[str, Any]], k: int) -> dict[str, Any]:
    return {"type": "message", "id": f"next{k}", "parentId": records[-1]["id"],
            "timestamp": _at(len(records)),
            "message": {"role": "user", "content": f"And the next thing ({k}).", "timestamp": 1}}


def codex_transcript(entries: int, session: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = [
        {"timestamp": _at(0), "type": "session_meta", "payload": {
            "id": session, "timestamp": _at(0), "cwd": "/work/app", "originator": "codex_cli_rs",
            "cli_version": "0.46.0", "source": "cli", "model_provider": "openai"}}]
    while len(records) + 6 <= entries:  # whole rounds: the file ends with a reply
        k, at = len(records), _at(len(records))
        for kind, payload in (
                ("turn_context", {"cwd": "/work/app", "model": "gpt-5-codex"}),
                ("response_item", {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": f"Step {k}: read the next file."}]}),
                ("response_item", {"type": "function_call", "name": "shell", "call_id": f"c{k}",
                                   "arguments": json.dumps({"command": ["cat", f"m{k}.py"]})}),
                ("response_item", {"type": "function_call_output", "call_id": f"c{k}",
                                   "output": _RESULT}),
                ("response_item", {"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": f"Read m{k}.py."}]}),
                ("event_msg", {"type": "token_count", "info": None})):
            records.append({"timestamp": at, "type": kind, "payload": payload})
    return records


def codex_prompt(records: list[dict[str, Any]], k: int) -> dict[str, Any]:
    return {"timestamp": _at(len(records)), "type": "response_item", "payload": {
        "type": "message", "role": "user",
        "content": [{"type": "input_text", "text": f"And the next thing ({k})."}]}}


async def growth_by_length(b: Bench) -> None:
    for tool, made in (("Claude Code", _claude_code), ("Pi", _pi), ("Codex", _codex)):
        for entries in b.sizes.growth_entries:
            name, lines, prompt = made(entries)
            folder = Path(tempfile.mkdtemp(prefix="bench-growth-"))
            file = folder / name
            file.write_text("".join(lines))
            follower = Follower(b.ledger, str(file), None, False)
            t0 = time.perf_counter()
            await follower.poll(3600)
            first = time.perf_counter() - t0
            polls = []
            for k in range(GROWTHS):
                with file.open("a") as f:
                    f.write(prompt(k))
                t0 = time.perf_counter()
                stored = await follower.poll(3600)
                polls.append(time.perf_counter() - t0)
                assert stored is not None and stored.written >= 1
            b.add(S13, f"a followed file's growth, {tool}, {entries:,} entries", None, None,
                  value=round(statistics.median(polls[2:]) * 1000, 1), unit="ms",
                  note=f"one prompt appended, one poll: median of {GROWTHS - 2} "
                       f"({', '.join(f'{x * 1000:.0f}' for x in polls)} ms, the first two "
                       f"planning); the follower's first import {first:.1f} s")


def _claude_code(entries: int) -> tuple[str, list[str], Callable[[int], str]]:
    lines = claude_code_transcript(entries + GROWTHS)

    def prompt(k: int) -> str:
        return json.dumps({**json.loads(lines[entries + k]), "type": "user", "message": {
            "role": "user", "content": f"And the next thing ({k})."}}) + "\n"

    return f"{SESSION}-growth-{entries}.jsonl", lines[:entries], prompt


def _pi(entries: int) -> tuple[str, list[str], Callable[[int], str]]:
    session = str(uuid.uuid4())
    records = pi_transcript(entries, session)

    def prompt(k: int) -> str:
        records.append(pi_prompt(records, k))
        return json.dumps(records[-1]) + "\n"

    return (f"2026-03-01T00-00-00-000Z_{session}.jsonl",
            [json.dumps(r) + "\n" for r in records], prompt)


def _codex(entries: int) -> tuple[str, list[str], Callable[[int], str]]:
    session = str(uuid.uuid4())
    records = codex_transcript(entries, session)
    return (f"rollout-2026-03-01T00-00-00-{session}.jsonl",
            [json.dumps(r) + "\n" for r in records],
            lambda k: json.dumps(codex_prompt(records, k)) + "\n")
