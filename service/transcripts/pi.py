"""Pi session files (`~/.pi/agent/sessions/…/<ts>_<uuid>.jsonl`) as a Transcript.

A header line (`type: session`), then entries with `id`/`parentId` (version 1 files have
none: each entry follows the one before it, keyed by its line). How they map (README,
"Importing agent transcripts"):
- `message` entries are turns: user; assistant (text, thinking, toolCall blocks);
  toolResult (consecutive ones answering one assistant message are one tool message);
  bashExecution and custom as the user text Pi sends for them (a `!!` run, excluded from
  the context, is no turn);
- `custom_message` is a user turn, `branch_summary` a user turn holding the text Pi sends
  ("The following is a summary of a branch …");
- a `compaction` is a summary of the path up to the entry before `firstKeptEntryId`; the
  kept entries stay verbatim after it, and the conversation goes on below the compacted
  leaf;
- label, model_change, thinking_level_change, session_info and custom entries are not
  turns (session_info's name is the title). A label entry labels the node holding its
  `targetId` (a turn, or a compaction's summary); a later one for that node replaces it,
  and one without a label clears it. HEAD is the last entry.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from .building import ROOT as _ROOT, Building as _Building, key_at, opener, \
    text_block, tool_use, turns_of
from .jsonl import objects
from ..errors import BadInput
from ..model import validate
from .model import Compaction, DegradedKind, Label, Mode, Transcript, Turn, bad_line, no_turns, \
    timestamp, tool_use_id

TOOL = "pi"
BOOKKEEPING = {"label", "model_change", "thinking_level_change", "session_info", "custom"}
KINDS = {"message", "compaction", "branch_summary", "custom_message", *BOOKKEEPING}
# Replies Pi leaves out of its model's context (its transform of messages skips them).
UNSENT_STOPS = {"aborted", "error"}
# What Pi sends in place of the result of a tool call its session holds none of (its
# transform of messages, before the next message).
UNANSWERED = "No result provided"
BRANCH_SUMMARY = ("The following is a summary of a branch that this conversation came back "
                  "from:\n\n<summary>\n{}\n</summary>")


def looks_like(first: dict[str, Any]) -> bool:
    return first.get("type") == "session" and isinstance(first.get("id"), str)


HEADER = "a Pi session file opens with a {\"type\": \"session\", \"id\"} header"


def parse(text: str, file: str, mode: Mode | None = None) -> Transcript:
    mode = mode if mode is not None else Mode(strict=True)
    parsing = Parsing(file, mode)
    for line, entry in objects(text, file, mode):
        parsing.take(line, entry)
    return parsing.transcript()


class Parsing:
    """A parse kept to read the lines a file gains (reading.py): `take` each line, in file
    order, and `transcript` at any point, which changes nothing of what was read; a turn
    no later line changed keeps its Turn (building.turns_of)."""

    def __init__(self, file: str, mode: Mode) -> None:
        self.file, self.mode = file, mode
        self.header: dict[str, Any] | None = None
        self.legacy = False
        self.turns: list[_Building] = []
        self.node_of: dict[str, int] = {}
        self.starts: set[str] = set()  # entries that are a turn's first entry
        self.compactions: list[Compaction] = []
        self.at: datetime | None = None
        self.title: str | None = None
        self.previous: str | None = None
        self.labels: dict[int | str, Label] = {}  # a turn's index, or a compaction's key
        self.made: list[Turn] = []

    def take(self, line: int, entry: dict[str, Any]) -> None:
        file, turns, node_of = self.file, self.turns, self.node_of
        if self.header is None:
            if not looks_like(entry):
                raise bad_line(file, 1, HEADER)
            self.header, self.legacy = entry, entry.get("version") is None
            self.at = timestamp(entry.get("timestamp"), None, file, 1)
            return
        legacy, previous = self.legacy, self.previous
        kind = entry["type"]
        if kind not in KINDS:
            self.mode.degrade(file, line, DegradedKind.UNKNOWN_ENTRY,
                              f"unknown entry type {kind!r} (known: {', '.join(sorted(KINDS))})")
            key = f"line{line}" if legacy else entry.get("id")
            parent_key = previous if legacy else entry.get("parentId")
            if isinstance(key, str) and key and key not in node_of:
                # bookkeeping: what follows it hangs from what it hangs from
                node_of[key] = node_of.get(parent_key, _ROOT) if parent_key is not None \
                    else _ROOT
                self.previous = key
            return
        key = f"line{line}" if legacy else entry.get("id")
        parent_key = previous if legacy else entry.get("parentId")
        if not isinstance(key, str) or not key:
            raise bad_line(file, line, f"a {kind} entry without an id")
        if parent_key is not None and (not isinstance(parent_key, str)
                                       or parent_key not in node_of):
            raise bad_line(file, line, f"parentId {parent_key!r} names no earlier entry")
        self.previous = key
        at = self.at = timestamp(entry.get("timestamp"), self.at, file, line)
        parent = _ROOT if parent_key is None else node_of[parent_key]

        def add(role: str, blocks: list[dict], meta: dict | None = None) -> None:
            meta = meta or {}
            stop = meta.get("stopReason")
            unsent = role == "assistant" and isinstance(stop, str) and stop in UNSENT_STOPS
            turns.append(_Building(role, parent, line, at, None, blocks, [key], meta,
                                   out_of_context=unsent))
            node_of[key] = len(turns) - 1
            self.starts.add(key)

        if kind == "label":
            target = _labeled(entry.get("targetId"), turns, node_of, self.compactions, file,
                              line)
            if target is not None:
                self.labels[target] = Label(str(target), _label_text(entry, file, line), at)
        if kind == "session_info" and isinstance(entry.get("name"), str):
            self.title = entry["name"].strip()[:200] or None
        if kind == "message":
            _message(entry.get("message"), key, parent, turns, node_of, add, file, line)
        elif kind == "custom_message":
            add("user", _content(entry.get("content"), file, line), {"custom": entry.get("customType")})
        elif kind == "branch_summary" and str(entry.get("summary", "")).strip():
            add("user", [{"type": "text", "text": BRANCH_SUMMARY.format(entry["summary"])}],
                {"branch_summary": {"from_id": entry.get("fromId")}})
        elif kind == "compaction":
            node_of[key] = parent
            kept = entry.get("firstKeptEntryId")
            if legacy and isinstance(entry.get("firstKeptEntryIndex"), int):
                kept = f"line{entry['firstKeptEntryIndex'] + 1}"  # the header is index 0
            if isinstance(kept, str) and kept in node_of:
                last = turns[node_of[kept]].parent if kept in self.starts else node_of[kept]
            else:
                last = parent
            meta = {"compaction": {"tokensBefore": entry.get("tokensBefore"),
                                   "details": entry.get("details")}}
            summary = str(entry.get("summary", ""))
            if last == _ROOT:
                add("user", [{"type": "text", "text": summary}], {**meta, "compact_summary": True})
                return
            self.compactions.append(Compaction(key, str(last), str(parent), summary, at, line,
                                               (key,), meta))
        elif key not in node_of:
            node_of[key] = parent  # not a turn

    def transcript(self) -> Transcript:
        if self.header is None:
            raise bad_line(self.file, 1, HEADER)
        turns = self.turns
        if not turns:
            raise no_turns(self.file)
        def named(index: int | str) -> str:
            return key_at(turns, int(index))

        previous = self.previous
        head = self.node_of[previous] if previous is not None else len(turns) - 1
        return Transcript(
            TOOL, self.file, self.header["id"], turns_of(turns, self.made),
            tuple(Compaction(c.key, named(c.last_covered), named(c.compacted_head), c.text,
                             c.at, c.line, c.entries, c.meta) for c in self.compactions),
            named(head if head != _ROOT else len(turns) - 1), self.title,
            labels=tuple(Label(named(t) if isinstance(t, int) else t, label.text, label.at)
                         for t, label in self.labels.items()), unanswered=UNANSWERED)


def _labeled(target: Any, turns: list[_Building], node_of: dict[str, int],
             compactions: list[Compaction], file: str, line: int) -> int | str | None:
    """The node a label entry labels: the turn holding entry `target`, or the summary of
    compaction `target`; None for an entry that is no node (bookkeeping, a run kept out
    of the context), which Pi shows no label on either."""
    if not isinstance(target, str) or target not in node_of:
        raise bad_line(file, line, f"targetId {target!r} names no earlier entry")
    if any(c.key == target for c in compactions):
        return target
    index = node_of[target]
    if index != _ROOT and target in turns[index].entries:
        return index
    return None


def _label_text(entry: dict[str, Any], file: str, line: int) -> str | None:
    text = entry.get("label")
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    try:
        return validate.label(text)
    except BadInput as e:
        raise bad_line(file, line, e.message) from None


def _message(message: Any, key: str, parent: int, turns: list[_Building],
             node_of: dict[str, int], add, file: str, line: int) -> None:
    if not isinstance(message, dict):
        raise bad_line(file, line, "a message entry without a message")
    role = message.get("role")
    if role == "user":
        add("user", _content(message.get("content"), file, line))
    elif role == "assistant":
        meta = {k: message[k] for k in ("provider", "model", "stopReason", "errorMessage", "usage")
                if k in message}
        content = message.get("content") or []
        if not isinstance(content, list):
            raise bad_line(file, line, "an assistant message whose content is not a list")
        blocks = [b for b in (_block(item, meta, file, line) for item in content) if b]
        if blocks:
            add("assistant", blocks, meta)
        else:
            node_of[key] = parent
    elif role == "toolResult":
        use = tool_use_id(str(message.get("toolCallId")))
        result = {"type": "tool_result", "tool_use_id": use,
                  "content": _content(message.get("content"), file, line),
                  "is_error": bool(message.get("isError"))}
        opens = opener(turns, parent)
        if opens is None or use not in turns[opens].tool_uses():
            raise bad_line(file, line, f"a tool result for {use} answers no tool call of the "
                           "message it follows")
        if turns[parent].role == "tool" and use not in turns[parent].answered():
            turns[parent].blocks.append(result)
            turns[parent].entries.append(key)
            turns[parent].changed = True
            node_of[key] = parent
        else:
            add("tool", [result])
    elif role == "bashExecution":
        if message.get("excludeFromContext"):
            node_of[key] = parent
            return
        add("user", [{"type": "text", "text": _shell_text(message)}], {"bash": True})
    elif role in ("custom", "hookMessage"):
        add("user", _content(message.get("content"), file, line), {"custom": message.get("customType")})
    else:
        raise bad_line(file, line, f"unknown message role {role!r}")


def _shell_text(message: dict[str, Any]) -> str:
    """A command the user ran in Pi (`!cmd`) as the user message Pi's model reads: the
    command, its output fenced (or "(no output)"), then whether it was cancelled or failed,
    and where a truncated output was kept in full."""
    output = message.get("output")
    parts = [f"Ran `{message.get('command')}`\n"
             + (f"```\n{output}\n```" if output else "(no output)")]
    code = message.get("exitCode")
    if message.get("cancelled"):
        parts.append("(command cancelled)")
    elif isinstance(code, int) and code != 0:
        parts.append(f"Command exited with code {code}")
    if message.get("truncated") and message.get("fullOutputPath"):
        parts.append(f"[Output truncated. Full output: {message['fullOutputPath']}]")
    return "\n\n".join(parts)


def _content(content: Any, file: str, line: int) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    if not isinstance(content, list):
        return []
    return [b for b in (_block(item, {}, file, line) for item in content) if b]


def _block(item: Any, meta: dict[str, Any], file: str, line: int) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        raise bad_line(file, line, "a content block is not an object")
    kind = item.get("type")
    if kind == "text":
        return text_block(item)
    if kind == "image":
        return {"type": "image", "source": {"type": "base64", "media_type": item.get("mimeType"),
                                            "data": item.get("data")}}
    if kind == "thinking":
        signature = item.get("thinkingSignature")
        if isinstance(signature, str) and signature.strip() and not item.get("redacted"):
            return {"type": "thinking", "thinking": str(item.get("thinking", "")),
                    "signature": signature}
        meta["unsigned_thinking"] = meta.get("unsigned_thinking", 0) + 1
        return None
    if kind == "toolCall":
        return tool_use(item.get("id"), item.get("name"), item.get("arguments"), meta,
                        "arguments")
    meta.setdefault("unmapped_blocks", []).append(str(kind))
    return None
