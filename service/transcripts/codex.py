"""Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`) as a
Transcript.

Each line is {timestamp, type, payload}; items carry no ids, so an entry is named by its
line ("line7"). How they map (README, "Importing agent transcripts"):
- `session_meta` names the session (its `id`); `response_item`s are what the model saw
  and the only source of turns; `event_msg`s are the display log and are ignored, all
  but `thread_rolled_back`; `turn_context` gives the model named on assistant turns;
- a user `message` is a user turn (contextual fragments such as `<environment_context>`
  too, marked `contextual`), a developer or system one a user turn marked with its role;
  consecutive assistant-side items (messages, reasoning, tool calls) are one assistant
  message; the outputs answering its calls (paired by `call_id`) are one tool message;
- `reasoning` has no place among the ledger's blocks (its summary is not signed
  thinking, its `encrypted_content` is OpenAI's, no Anthropic redacted_thinking): it is
  kept verbatim in the assistant message's metadata, `reasoning`;
- `thread_rolled_back {num_turns}` forks: the next turn follows what preceded the
  num_turns-th last real user message, the rolled-back turns stay as a branch;
- `compacted` is a summary of the chain up to it, its text what the replacement history
  gave the model (real messages and the summary; an encrypted `compaction` item as a
  sentence saying so, its content kept in metadata), or `message` when it has none.
HEAD is where the last line left the conversation.
"""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import PurePath
from typing import Any

from .building import ROOT, Building, key_of, keys_of, merge_meta, opener, tool_use, \
    turns_of
from .jsonl import objects
from .model import Compaction, Mode, Transcript, bad_line, no_turns, timestamp, tool_use_id

TOOL = "codex"
CONTEXTUAL = ("# AGENTS.md instructions for", "<user_instructions>", "<environment_context>",
              "<skill>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>")
CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action"}
OUTPUTS = {"function_call_output", "custom_tool_call_output"}
ENCRYPTED = ("[This compaction's summary is encrypted by the provider ({} characters); it "
             "cannot be read here.]")


def looks_like(first: dict[str, Any]) -> bool:
    return first.get("type") == "session_meta" and isinstance(first.get("payload"), dict)


def parse(text: str, file: str, mode: Mode | None = None) -> Transcript:
    mode = mode if mode is not None else Mode(strict=True)
    reader = _Reader(file)
    for line, entry in objects(text, file, mode):
        reader.take(line, entry)
    return reader.transcript()


class _Reader:
    def __init__(self, file: str) -> None:
        self.file = file
        self.turns: list[Building] = []
        self.current = ROOT  # the turn the next one follows
        self.open = False  # the current turn is an assistant message still gaining items
        self.reasoning: list[tuple[str, dict[str, Any]]] = []  # (entry, item) for the next
        self.note: dict[str, Any] = {}  # what the next turn's metadata says of a rollback
        self.compactions: list[tuple[int, int, str, datetime, dict[str, Any]]] = []
        self.session_key = PurePath(file).stem
        self.meta: dict[str, Any] = {}
        self.model: str | None = None
        self.at: datetime | None = None

    def take(self, line: int, entry: dict[str, Any]) -> None:
        payload = entry.get("payload")
        if not isinstance(payload, dict):
            raise bad_line(self.file, line, f"a {entry['type']} line without a payload object")
        self.at = timestamp(entry.get("timestamp"), self.at, self.file, line)
        kind = entry["type"]
        if kind == "session_meta":
            if isinstance(payload.get("id"), str) and payload["id"]:
                self.session_key = payload["id"]
            self.meta = {k: payload[k] for k in ("cwd", "originator", "cli_version", "source",
                                                 "model_provider", "git") if k in payload}
        elif kind == "turn_context":
            self.model = payload.get("model") if isinstance(payload.get("model"), str) else None
        elif kind == "response_item":
            self._item(line, payload)
        elif kind == "compacted":
            self._compacted(line, payload)
        elif kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            self._rollback(line, payload)
        # other event_msgs duplicate response items or are display state; newer line types
        # (inter_agent_communication, world_state, …) hold no turns

    # --- response items ---------------------------------------------------------------

    def _item(self, line: int, item: dict[str, Any]) -> None:
        kind, entry = item.get("type"), f"line{line}"
        if kind == "message":
            self._message(line, entry, item)
        elif kind == "reasoning":
            self.reasoning.append((entry, _reasoning(item)))
        elif kind in CALLS:
            meta: dict[str, Any] = {}
            block = self._call(line, kind, item, meta)
            if block is None:
                self._unmapped(str(kind))
            else:
                self._assistant(line, entry, [block], meta)
        elif kind in OUTPUTS:
            self._output(line, entry, item)
        else:
            self._unmapped(str(kind))  # web searches, ghost snapshots, …: no turn of their own

    def _message(self, line: int, entry: str, item: dict[str, Any]) -> None:
        role = item.get("role")
        blocks = _content(item.get("content"), self.file, line)
        if role == "assistant":
            if blocks:
                self._assistant(line, entry, blocks, {})
            return
        if role not in ("user", "developer", "system"):
            raise bad_line(self.file, line, f"unknown message role {role!r}")
        if not blocks:
            return
        meta: dict[str, Any] = {}
        if role != "user":
            meta["role"] = role
        elif _contextual(blocks):
            meta["contextual"] = True
        self._add(Building("user", self.current, line, self.at, None, blocks, [entry], meta))

    def _assistant(self, line: int, entry: str, blocks: list[dict], meta: dict) -> None:
        if self.open:
            building = self.turns[self.current]
            building.blocks += blocks
            building.entries += [e for e, _ in self.reasoning] + [entry]
            merge_meta(building.meta, meta)
        else:
            if self.model:
                meta["model"] = self.model
            building = Building("assistant", self.current, line, self.at, None, blocks,
                                [e for e, _ in self.reasoning] + [entry], meta)
            self._add(building)
            self.open = True
        if self.reasoning:
            building.meta.setdefault("reasoning", []).extend(r for _, r in self.reasoning)
            self.reasoning = []

    def _call(self, line: int, kind: str, item: dict[str, Any],
              meta: dict[str, Any]) -> dict[str, Any] | None:
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            if kind == "local_shell_call":
                return None  # older local shell calls name no call_id: nothing answers them
            raise bad_line(self.file, line, f"a {kind} without a call_id")
        if kind == "local_shell_call":
            return tool_use(call_id, "local_shell", item.get("action"), meta, "action")
        raw = item.get(CALLS[kind])
        if kind == "custom_tool_call":
            return tool_use(call_id, item.get("name"), raw, meta, "input")
        arguments = raw
        if isinstance(raw, str):
            try:
                arguments = json.loads(raw)
            except ValueError:
                meta["unparsed_arguments"] = [tool_use_id(call_id)]
        return tool_use(call_id, item.get("name"), arguments, meta, "arguments")

    def _output(self, line: int, entry: str, item: dict[str, Any]) -> None:
        use = tool_use_id(str(item.get("call_id")))
        result = {"type": "tool_result", "tool_use_id": use, **_output(item.get("output"),
                                                                        self.file, line)}
        opens = opener(self.turns, self.current)
        if opens is None or use not in self.turns[opens].tool_uses():
            raise bad_line(self.file, line, f"the output of call {item.get('call_id')!r} "
                           "answers no tool call of the message it follows")
        current = self.turns[self.current]
        self.open = False
        if current.role == "tool" and use not in current.answered():
            current.blocks.append(result)
            current.entries.append(entry)
        else:
            self._add(Building("tool", opens, line, self.at, None, [result], [entry], {}))

    # --- rollbacks and compactions ----------------------------------------------------

    def _rollback(self, line: int, payload: dict[str, Any]) -> None:
        n = payload.get("num_turns")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise bad_line(self.file, line, f"thread_rolled_back num_turns {n!r} is not a "
                           "count")
        path = self._path()
        boundaries = [i for i in path if self.turns[i].role == "user"
                      and not {"role", "contextual"} & set(self.turns[i].meta)]
        if n == 0 or not boundaries:
            return
        cut = boundaries[0] if n >= len(boundaries) else boundaries[-n]
        if self.compactions and self.compactions[-1][1] in path[path.index(cut):]:
            raise bad_line(self.file, line, "a rollback to before a compaction is not "
                           "supported: the ledger cannot split what the summary replaced")
        self.current, self.open, self.reasoning = self.turns[cut].parent, False, []
        self.note = {"after_rollback": {"line": line, "num_turns": n}}

    def _compacted(self, line: int, payload: dict[str, Any]) -> None:
        text, meta = _summary(payload, self.file, line)
        entry = f"line{line}"
        self.open, self.reasoning = False, []
        if self.current == ROOT:
            # Nothing before it in this file: the summary is what the model read first.
            if text:
                self._add(Building("user", ROOT, line, self.at, None,
                                   [{"type": "text", "text": text}], [entry],
                                   {**meta, "compact_summary": True}))
            return
        self.compactions.append((line, self.current, text, self.at, meta))

    # --- helpers ----------------------------------------------------------------------

    def _add(self, building: Building) -> None:
        building.meta.update(self.note)
        self.note = {}
        if self.reasoning and building.role != "assistant":
            building.meta["reasoning_without_reply"] = [r for _, r in self.reasoning]
            self.reasoning = []
        self.turns.append(building)
        self.current, self.open = len(self.turns) - 1, False

    def _unmapped(self, kind: str) -> None:
        if self.current != ROOT:
            self.turns[self.current].meta.setdefault("unmapped_items", []).append(kind)

    def _path(self) -> list[int]:
        path, at = [], self.current
        while at != ROOT:
            path.append(at)
            at = self.turns[at].parent
        return path[::-1]

    def transcript(self) -> Transcript:
        if not self.turns:
            raise no_turns(self.file)
        keys = keys_of(self.turns)
        compactions = tuple(
            Compaction(f"line{line}", key_of(keys, at), key_of(keys, at), text, when, line,
                       (f"line{line}",), meta)
            for line, at, text, when, meta in self.compactions)
        return Transcript(TOOL, self.file, self.session_key, turns_of(self.turns), compactions,
                          key_of(keys, self.current), None, self.meta)


def _content(content: Any, file: str, line: int) -> list[dict[str, Any]]:
    if content is None:
        return []
    if not isinstance(content, list):
        raise bad_line(file, line, "message content is not a list of items")
    blocks = []
    for item in content:
        if not isinstance(item, dict):
            raise bad_line(file, line, "a content item is not an object")
        kind = item.get("type")
        if kind in ("input_text", "output_text", "text"):
            if isinstance(item.get("text"), str) and item["text"].strip():
                blocks.append({"type": "text", "text": item["text"]})
        elif kind == "input_image":
            blocks.append({"type": "image", "source": _image_source(item.get("image_url"))})
        else:
            raise bad_line(file, line, f"unknown content item type {kind!r}")
    return blocks


def _image_source(url: Any) -> dict[str, Any]:
    if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
        media_type, data = url[len("data:"):].split(";base64,", 1)
        return {"type": "base64", "media_type": media_type, "data": data}
    return {"type": "url", "url": url}


def _contextual(blocks: list[dict[str, Any]]) -> bool:
    first = blocks[0].get("text", "") if blocks else ""
    return first.lstrip().startswith(CONTEXTUAL)


def _output(output: Any, file: str, line: int) -> dict[str, Any]:
    if isinstance(output, str):
        return {"content": [{"type": "text", "text": output}] if output.strip() else [],
                "is_error": False}
    if isinstance(output, list):
        return {"content": _content(output, file, line), "is_error": False}
    if isinstance(output, dict):  # older rollouts: {content, success}
        inner = _output(output.get("content", ""), file, line)
        return {**inner, "is_error": output.get("success") is False}
    raise bad_line(file, line, "a tool output is neither text nor a list of items")


def _reasoning(item: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {
        "summary": [s.get("text") for s in item.get("summary") or [] if isinstance(s, dict)]}
    if item.get("content"):
        kept["content"] = [c.get("text") for c in item["content"] if isinstance(c, dict)]
    if item.get("encrypted_content"):
        kept["encrypted_content"] = item["encrypted_content"]
    return kept


def _summary(payload: dict[str, Any], file: str, line: int) -> tuple[str, dict[str, Any]]:
    """The text the model read in place of what a compaction replaced, and its metadata."""
    message = payload.get("message") if isinstance(payload.get("message"), str) else ""
    history = payload.get("replacement_history")
    if not isinstance(history, list):
        return message, {"compaction": {"kind": "local", "replacement_history": False}}
    parts: list[str] = []
    encrypted: list[str] = []
    skipped: dict[str, int] = {}
    for item in history:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "message":
            blocks = [b for b in _content(item.get("content"), file, line) if b["type"] == "text"]
            if blocks and not (item.get("role") != "assistant" and _contextual(blocks)) \
                    and item.get("role") in ("user", "assistant"):
                parts.append("\n\n".join(b["text"] for b in blocks))
                continue
            kind = "context"
        if kind in ("compaction", "compaction_summary") and item.get("encrypted_content"):
            encrypted.append(str(item["encrypted_content"]))
            parts.append(ENCRYPTED.format(len(encrypted[-1])))
            continue
        skipped[str(kind)] = skipped.get(str(kind), 0) + 1
    if message.strip() and not any(message.strip() in part for part in parts):
        parts.append(message)
    meta: dict[str, Any] = {"kind": "remote" if encrypted else "local",
                            "replacement_history": True}
    if encrypted:
        meta["encrypted_content"] = encrypted
    if skipped:
        meta["not_in_summary"] = skipped
    return "\n\n".join(parts), {"compaction": meta}
