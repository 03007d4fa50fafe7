"""Where an imported session came from, as its file says: a title and the tool's facts.

Each format has one small reader of its own lines (`claude_code`, `pi`, `codex`), apart
from its parser: the tool's version, the working directory, the git branch, the models
and the tool's own title. A reader folds lines into the Facts it is given, so the lines a
file gains are read into what its earlier lines said (reading.py), never read twice.
`describe` completes that from the transcript: the first user prompt as the title when
the tool gave none, the project (the working directory's last part), the first and last
timestamps of what is stored.

The session stores it as its `source` (docs/guides/importing-sessions.md), and its
title as the session's title, which a later import replaces only while the user has not
changed it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any, Callable, Iterable

from ..model.validate import MAX_TITLE_LENGTH
from .model import Transcript

TITLE_LENGTH = 80  # a first prompt as a title: the list shows one line
Lines = Iterable[tuple[int, dict[str, Any]]]
# Turns that are not what the user typed: context the tool adds, its own notes, summaries.
_NOT_TYPED = {"contextual", "role", "custom", "bash", "compact_summary", "branch_summary",
              "is_meta", "synthetic", "agent"}
# Codex's IDE extension sends the editor's context (the active file, the open tabs) before
# what the user typed, which follows this line; Codex titles its threads by what follows.
CODEX_REQUEST = "## My request for Codex:"


@dataclass
class Facts:
    """What one format's lines say; None where they say nothing."""

    title: str | None = None
    version: str | None = None
    cwd: str | None = None
    git_branch: str | None = None
    models: list[str] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # of each kind, the newest (Claude Code)
    thread: str | None = None  # the first session_meta's id (Codex): the rollout's own thread

    def model(self, name: Any) -> None:
        if isinstance(name, str) and name.strip() and whole(name) not in self.models:
            self.models.append(whole(name))


def _text(value: Any) -> str | None:
    return whole(value.strip()) if isinstance(value, str) and value.strip() else None


# Half a UTF-16 surrogate pair, which JSON may spell alone ("\ud83d": a JavaScript tool's
# text cut inside an emoji) and no store takes: a fact shows the replacement character
# in its place, where a block holding one is degraded.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def whole(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def claude_code(lines: Lines, facts: Facts | None = None) -> Facts:
    """The newest `custom-title` (the user's), else `ai-title`, else the newest `summary`
    entry; `version`, `cwd` and `gitBranch` of the chain records (the last one's), each
    assistant message's `model` (but Claude Code's `<synthetic>` notes)."""
    facts = facts if facts is not None else Facts()
    titles = facts.titles
    for _, entry in lines:
        kind = entry.get("type")
        for key, wanted in (("customTitle", "custom-title"), ("aiTitle", "ai-title"),
                            ("summary", "summary")):
            if kind == wanted and _text(entry.get(key)):
                titles[wanted] = _text(entry[key])
        if kind in ("user", "assistant"):
            facts.version = _text(entry.get("version")) or facts.version
            facts.cwd = _text(entry.get("cwd")) or facts.cwd
            facts.git_branch = _text(entry.get("gitBranch")) or facts.git_branch
        message = entry.get("message")
        if kind == "assistant" and isinstance(message, dict) \
                and message.get("model") != "<synthetic>":
            facts.model(message.get("model"))
    facts.title = titles.get("custom-title") or titles.get("ai-title") or titles.get("summary")
    return facts


def pi(lines: Lines, facts: Facts | None = None) -> Facts:
    """The header's `cwd` (a Pi file records no version of Pi: the header's `version` is
    its file format's), the newest `session_info` name, the models of `model_change`
    entries and of assistant messages."""
    facts = facts if facts is not None else Facts()
    for _, entry in lines:
        kind = entry.get("type")
        if kind == "session":
            facts.cwd = _text(entry.get("cwd"))
        elif kind == "session_info" and "name" in entry:
            facts.title = _text(entry.get("name"))
        elif kind == "model_change":
            facts.model(entry.get("modelId"))
        elif kind == "message" and isinstance(entry.get("message"), dict) \
                and entry["message"].get("role") == "assistant":
            facts.model(entry["message"].get("model"))
    return facts


def codex(lines: Lines, facts: Facts | None = None) -> Facts:
    """`cli_version`, `cwd` and `git.branch` of the rollout's own `session_meta` lines, those
    naming the first one's thread (another thread's is a parent's, copied into a fork with
    its history); each `turn_context`'s `model`; the newest name a `thread_name_updated`
    event gives the rollout's own thread (codex_names.py: Codex's index names it too)."""
    facts = facts if facts is not None else Facts()
    for _, entry in lines:
        payload = entry.get("payload")
        if not isinstance(payload, dict):
            continue
        if entry.get("type") == "session_meta":
            thread = payload["id"] if isinstance(payload.get("id"), str) else ""
            if facts.thread is None:
                facts.thread = thread
            elif thread != facts.thread:
                continue
            facts.version = _text(payload.get("cli_version"))
            facts.cwd = _text(payload.get("cwd"))
            git = payload.get("git")
            facts.git_branch = _text(git.get("branch")) if isinstance(git, dict) else None
        elif entry.get("type") == "turn_context":
            facts.model(payload.get("model"))
        elif entry.get("type") == "event_msg" and payload.get("type") == "thread_name_updated" \
                and payload.get("thread_id") in (None, facts.thread):
            facts.title = _text(payload.get("thread_name"))
    return facts


READERS: dict[str, Callable[[Lines, Facts | None], Facts]] = {
    "claude-code": claude_code, "pi": pi, "codex": codex}


def describe(transcript: Transcript, lines: Lines, facts: Facts | None = None,
             named: str | None = None) -> dict[str, Any]:
    """The session's `source`: the format's facts (what `lines` say, read into `facts`: a
    file's lines read before), the title (the name the tool keeps beside the file, `named`,
    else the tool's own in the file, else the first prompt), the project, and the times of
    the first and last turn or compaction."""
    facts = READERS[transcript.tool](lines, facts)
    stamps = [t.at for t in transcript.turns] + [c.at for c in transcript.compactions]
    return {
        "tool": transcript.tool, "version": facts.version, "file": transcript.file,
        "session": transcript.session_key, "cwd": facts.cwd, "project": project(facts.cwd),
        "git_branch": facts.git_branch, "models": facts.models,
        "title": _own_title(named or facts.title or transcript.title)
        or first_prompt(transcript),
        "first_at": min(stamps).isoformat(), "last_at": max(stamps).isoformat(),
    }


def _own_title(text: str | None) -> str | None:
    flat = " ".join(whole(text).split()) if text else ""
    return flat[:MAX_TITLE_LENGTH] or None


def project(cwd: str | None) -> str | None:
    if not cwd:
        return None
    path = PureWindowsPath(cwd) if "\\" in cwd else PurePosixPath(cwd)
    return path.name or cwd


def first_prompt(transcript: Transcript) -> str | None:
    """The first thing the user typed: a user turn of the transcript's own chain that no
    marker names as context, a command or a summary; else the first slash command the user
    ran (Claude Code's `<command-name>/review</command-name>` with its `<command-args>`,
    whose expansion the tool marks as its own), as `/review 12`; of a prompt Codex's IDE
    extension sent, what follows its CODEX_REQUEST line."""
    command = None
    for turn in transcript.turns:
        if turn.role != "user" or turn.side_branch or turn.caller or _NOT_TYPED & turn.meta.keys():
            continue
        for block in turn.blocks:
            text = block.get("text") if block.get("type") == "text" else None
            if isinstance(text, str) and transcript.tool == "codex" and CODEX_REQUEST in text:
                text = text.split(CODEX_REQUEST, 1)[1]
            if not isinstance(text, str) or not text.strip():
                continue
            if not text.lstrip().startswith("<"):
                return clipped(text)
            command = command or _command(text)
    return command


_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)


def _command(text: str) -> str | None:
    """A slash command's name and arguments, from the text Claude Code records for it."""
    name = _COMMAND_NAME.search(text)
    if name is None or not name.group(1).strip():
        return None
    args = _COMMAND_ARGS.search(text)
    return clipped(f"{name.group(1)} {args.group(1) if args else ''}")


def clipped(text: str | None) -> str | None:
    if not text:
        return None
    flat = " ".join(whole(text).split())
    return flat if len(flat) <= TITLE_LENGTH else flat[:TITLE_LENGTH - 1] + "…"


def dumps(source: dict[str, Any]) -> str:
    return json.dumps(source, ensure_ascii=False, sort_keys=True)
