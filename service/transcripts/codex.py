"""Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`) as a
Transcript.

Each line is {timestamp, type, payload}; items carry no ids, so an entry is named by its
line ("line7"). How they map (docs/guides/importing-sessions.md):
- the first `session_meta` names the session (its `id`) and gives its system prompt
  (`base_instructions.text`: ROOT's text); a later one (the parent's, which a forked
  thread's file holds with the parent's history it copied) names neither; the last naming
  `dynamic_tools` gives the tools a client registered (a namespace's tools in its place:
  the session's tool set; Codex's built-in tools are in no line); `response_item`s are
  what the model saw
  and the only source of turns; `event_msg`s are the display log and are ignored, all
  but `thread_rolled_back`; `turn_context` gives the model named on assistant turns;
- a user `message` is a user turn (contextual fragments such as `<environment_context>`
  too, marked `contextual`), a developer or system one a user turn marked with its role;
  consecutive assistant-side items (messages, reasoning, tool calls) are one assistant
  message; the outputs answering its calls (paired by `call_id`) are one tool message;
- what is recorded between calls and their outputs (developer messages, the user's
  steering, …) is held until the results are in, and follows them; the calling message
  keeps its own items before the first output; a turn that ends first releases it;
- `reasoning` has no place among the ledger's blocks (its summary is not signed
  thinking, its `encrypted_content` is OpenAI's, no Anthropic redacted_thinking): it is
  kept verbatim in the assistant message's metadata, `reasoning`, but for encrypted
  content past ENCRYPTED_KEPT characters a message, kept as its size (a node's metadata
  is limited; no render sends it);
- `thread_rolled_back {num_turns}` forks: the next turn follows what preceded the
  num_turns-th last real user message, the rolled-back turns stay as a branch;
- `compacted` is a summary of the chain up to it. With a `replacement_history` (what
  Codex's model reads from then on) the summary holds its first item and the others are
  turns of their own after the covered chain (its retained turns, named `line26.2`, …),
  so the render is that history item by item; a `compaction` item (encrypted by OpenAI)
  reads as a mention naming it, its content kept in metadata. Without one it reads
  `message`.
HEAD is where the last line left the conversation.
"""
from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import PurePath
from typing import Any

from .building import ROOT, Building, key_at, merge_meta, opener, tool_use, \
    turns_of
from .jsonl import objects
from .model import Compaction, Mode, NamedTools, SystemPrompt, Transcript, Turn, bad_line, \
    no_turns, timestamp, tool_name, tool_use_id

TOOL = "codex"
CONTEXTUAL = ("# AGENTS.md instructions for", "<user_instructions>", "<environment_context>",
              "<skill>", "<user_shell_command>", "<turn_aborted>", "<subagent_notification>")
CALLS = {"function_call": "arguments", "custom_tool_call": "input", "local_shell_call": "action"}
OUTPUTS = {"function_call_output", "custom_tool_call_output"}
# What Codex sends in place of the output of a call its rollout holds none of (its history's
# normalization, right after the call).
UNANSWERED = "aborted"
COMPACTION_ITEMS = {"compaction", "compaction_summary"}
# Where a dynamic tool's JSON Schema is: `inputSchema` as Codex writes it (camelCase), the
# other spellings as other writers of the shape do.
SCHEMA_KEYS = ("inputSchema", "input_schema", "parameters")
# Characters of reasoning items' encrypted content one message's metadata keeps verbatim
# (a node's metadata is limited, CTXDAG_MAX_METADATA_BYTES: 64 KiB by default); an item
# past them keeps its size, `encrypted_content_chars`. Codex records items of 70 KB.
ENCRYPTED_KEPT = 32 * 1024
COMPACTION_MENTION = ("[Codex compaction item ({}): the summary of the conversation before it, "
                      "encrypted by OpenAI ({} characters); it cannot be read here.]")


def looks_like(first: dict[str, Any]) -> bool:
    return first.get("type") == "session_meta" and isinstance(first.get("payload"), dict)


def parse(text: str, file: str, mode: Mode | None = None) -> Transcript:
    mode = mode if mode is not None else Mode(strict=True)
    reader = _Reader(file)
    for line, entry in objects(text, file, mode):
        reader.take(line, entry)
    return reader.transcript()


class Parsing:
    """A parse kept to read the lines a file gains (reading.py): `take` each line, in file
    order, and `transcript` at any point, which changes nothing of what was read; a turn
    no later line changed keeps its Turn (building.turns_of)."""

    def __init__(self, file: str, mode: Mode) -> None:
        self.reader = _Reader(file)
        self.made: list[Turn] = []

    @property
    def turns(self) -> list[Building]:
        return self.reader.turns

    def take(self, line: int, entry: dict[str, Any]) -> None:
        self.reader.take(line, entry)

    def transcript(self) -> Transcript:
        return self.reader.transcript(self.made)


class _Reader:
    def __init__(self, file: str) -> None:
        self.file = file
        self.turns: list[Building] = []
        self.current = ROOT  # the turn the next one follows
        self.open = False  # the current turn is an assistant message still gaining items
        self.reasoning: list[tuple[str, dict[str, Any]]] = []  # (entry, item) for the next
        self.note: dict[str, Any] = {}  # what the next turn's metadata says of a rollback
        self.compactions: list[tuple[int, int, int, str, datetime, dict[str, Any]]] = []
        self.session_key = PurePath(file).stem
        self.meta: dict[str, Any] = {}
        self.model: str | None = None
        self.at: datetime | None = None
        # Lines recorded between calls and their outputs, placed after the results.
        self.held: list[tuple[int, dict[str, Any]]] = []
        self.released = False  # the turns being added are held ones
        self.given_up: int | None = None  # a calling message no later output answers
        self.replaying: dict[str, Any] | None = None  # a compaction's history being read
        self.tools: NamedTools | None = None  # the last session_meta naming dynamic_tools
        self.system: SystemPrompt | None = None  # the first session_meta's base_instructions
        self.named = False  # a session_meta was read: the first names the session

    def take(self, line: int, entry: dict[str, Any]) -> None:
        """One line; a line recorded while the calling message waits for its outputs waits
        with it (README: what the ledger's pair rule makes of it)."""
        if not self.held and not self._awaited():
            self._apply(line, entry)
        elif self._answers_awaited(entry) or (not self.held and self._calling(entry)):
            self._apply(line, entry)
            if not self._awaited():
                self._release()
        elif _ends_waiting(entry):
            self._give_up()
            self._apply(line, entry)
        else:
            self.held.append((line, entry))

    def _apply(self, line: int, entry: dict[str, Any]) -> None:
        payload = entry.get("payload")
        if not isinstance(payload, dict):
            raise bad_line(self.file, line, f"a {entry['type']} line without a payload object")
        self.at = timestamp(entry.get("timestamp"), self.at, self.file, line)
        kind = entry["type"]
        if kind == "session_meta":
            if not self.named:
                # The first names the thread; a later one is a parent's, copied into a fork
                # with the parent's history (Codex writes the fork's own first).
                self.named = True
                if isinstance(payload.get("id"), str) and payload["id"]:
                    self.session_key = payload["id"]
                self.meta = {k: payload[k] for k in ("cwd", "originator", "cli_version",
                                                     "source", "model_provider", "git")
                             if k in payload}
                self.system = _system_prompt(payload.get("base_instructions"), line)
            tools = payload.get("dynamic_tools")
            if isinstance(tools, list) and tools:
                self.tools = NamedTools(line, self.at, tuple(_dynamic_tools(tools)))
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

    def _item(self, line: int, item: dict[str, Any], entry: str | None = None) -> None:
        kind, entry = item.get("type"), entry or f"line{line}"
        if not isinstance(kind, str):
            self._unmapped(str(kind))
        elif kind == "message":
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
        elif kind in COMPACTION_ITEMS:
            text, meta = _compaction_item(item)
            self._add(Building("user", self.current, line, self.at, None,
                               [{"type": "text", "text": text}], [entry], meta))
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
            building.changed = True
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
            kept = building.meta.setdefault("reasoning", [])
            kept.extend(_within_budget(kept, [r for _, r in self.reasoning]))
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
            current.changed = True
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
        """What Codex's model reads from here on: the replacement history, item by item
        (README), or, without one, the summary `message` alone."""
        entry, before = f"line{line}", self.current
        self.open, self.reasoning = False, []
        history = payload.get("replacement_history")
        message = payload.get("message") if isinstance(payload.get("message"), str) else ""
        if not isinstance(history, list):
            meta = {"compaction": {"kind": "local", "replacement_history": False}}
            if before == ROOT:  # nothing before it in this file: the model read it first
                if message.strip():
                    self._add(Building("user", ROOT, line, self.at, None,
                                       [{"type": "text", "text": message}], [entry],
                                       {**meta, "compact_summary": True}))
            else:
                self.compactions.append((line, before, before, message, self.at, meta))
            return
        if not all(isinstance(item, dict) for item in history):
            raise bad_line(self.file, line, "a replacement_history item is not an object")
        # The summary stands right after ROOT, so it holds the first item; the others are
        # turns of their own after what it covers. At ROOT nothing is covered: all are turns.
        text, meta, replayed = "", {}, list(enumerate(history, start=1))
        holds = before != ROOT and bool(history) and _standing_in(history[0])
        if holds:
            text, meta = _stand_in(history[0], self.file, line)
            replayed = replayed[1:]
        self.replaying = {"of": entry, "not_rendered": []}
        for index, item in replayed:
            self._item(line, item, f"{entry}.{index}")
        not_rendered, self.replaying = self.replaying["not_rendered"], None
        self.open, self.reasoning = False, []
        summary = {"kind": "remote" if any(_type(i) in COMPACTION_ITEMS for i in history)
                   else "local", "replacement_history": len(history),
                   **({"holds_item": 1} if holds else {})}
        if message.strip() and not any(message.strip() in t for t in _texts(history)):
            summary["message"] = message  # Codex sends the history, not this
        if not_rendered:
            summary["not_rendered"] = not_rendered
        if before != ROOT:
            self.compactions.append((line, before, self.current, text, self.at,
                                     {**meta, "compaction": summary}))

    # --- calls waiting for their outputs -----------------------------------------------

    def _awaited(self) -> list[str]:
        """The tool uses of the message the next output answers that have no result yet."""
        opens = opener(self.turns, self.current)
        if opens is None or opens == self.given_up:
            return []
        current = self.turns[self.current]
        answered = current.answered() if current.role == "tool" else []
        return [u for u in self.turns[opens].tool_uses() if u not in answered]

    def _answers_awaited(self, entry: dict[str, Any]) -> bool:
        item = entry.get("payload")
        return entry.get("type") == "response_item" and isinstance(item, dict) \
            and _type(item) in OUTPUTS \
            and tool_use_id(str(item.get("call_id"))) in self._awaited()

    def _calling(self, entry: dict[str, Any]) -> bool:
        """An item of the calling message itself: its response goes on before any output."""
        item = entry.get("payload")
        return entry.get("type") == "response_item" and isinstance(item, dict) \
            and self.open and (_type(item) in CALLS or item.get("type") == "reasoning"
                               or (item.get("type") == "message"
                                   and item.get("role") == "assistant"))

    def _release(self) -> None:
        """The held lines, in their order, now that the results are in (or never come)."""
        held, self.held = self.held, []
        was, self.released = self.released, True
        for line, entry in held:
            self.take(line, entry)
        self.released = was

    def _give_up(self) -> None:
        """The turn ended (or the file did) without the outputs awaited: the held lines
        follow the calling message, which gets cancelled results (document.py)."""
        while self.held or self._awaited():
            self.given_up = opener(self.turns, self.current)
            self.open = False
            self._release()

    # --- helpers ----------------------------------------------------------------------

    def _add(self, building: Building) -> None:
        if self.replaying:
            building.meta["replacement_history"] = self.replaying["of"]
        if self.released:
            building.meta["recorded_before_results"] = True
        building.meta.update(self.note)
        self.note = {}
        if self.reasoning and building.role != "assistant":
            building.meta["reasoning_without_reply"] = _within_budget(
                [], [r for _, r in self.reasoning])
            self.reasoning = []
        self.turns.append(building)
        self.current, self.open = len(self.turns) - 1, False

    def _unmapped(self, kind: str) -> None:
        if self.replaying:
            self.replaying["not_rendered"].append(kind)
        elif self.current != ROOT:
            self.turns[self.current].changed = True
            self.turns[self.current].meta.setdefault("unmapped_items", []).append(kind)

    def _path(self) -> list[int]:
        path, at = [], self.current
        while at != ROOT:
            path.append(at)
            at = self.turns[at].parent
        return path[::-1]

    def transcript(self, made: list[Turn] | None = None) -> Transcript:
        """All read so far, as if the file ended here: the calls still awaited are given
        up on (the lines held for them follow the calling message) in a copy of the
        reader, so what was read is unchanged and more lines can be taken. `made`: as
        building.turns_of's."""
        reader = self
        if self.held or self._awaited():
            if made is not None:
                turns_of(self.turns, made)  # what was read keeps its Turns in `made`
                made = list(made)  # the copy's own
            reader = self._copy()
            reader._give_up()
        if not reader.turns:
            raise no_turns(self.file)
        turns = reader.turns
        compactions = tuple(
            Compaction(f"line{line}", key_at(turns, covered), key_at(turns, kept), text, when,
                       line, (f"line{line}",), meta)
            for line, covered, kept, text, when, meta in reader.compactions)
        return Transcript(TOOL, self.file, self.session_key, turns_of(turns, made),
                          compactions, key_at(turns, reader.current), None, reader.meta,
                          tools=reader.tools, system=reader.system, unanswered=UNANSWERED)

    def _copy(self) -> _Reader:
        """A copy to give up on the awaited calls in: giving up changes the calling message
        and the turns after it (and adds turns), so those are copied (each one it changes
        is marked so, as in the reader itself); the turns before it are shared."""
        calling = opener(self.turns, self.current)
        first = max(0, min(self.current, self.current if calling is None else calling))
        reader = copy.copy(self)
        reader.turns = self.turns[:first] + [copy.deepcopy(b) for b in self.turns[first:]]
        reader.held, reader.reasoning = list(self.held), list(self.reasoning)
        reader.compactions, reader.note = list(self.compactions), dict(self.note)
        return reader


def _system_prompt(instructions: Any, line: int) -> SystemPrompt | None:
    """`session_meta.base_instructions` (Codex's system prompt, {text}) when it holds text."""
    text = instructions.get("text") if isinstance(instructions, dict) else None
    return SystemPrompt(text, line) if isinstance(text, str) and text.strip() else None


def _dynamic_tools(entries: list[Any]) -> list[Any]:
    """`session_meta.dynamic_tools` as neutral definitions, a namespace's tools in its place:
    a function ({type: "function"}, or untyped as older versions wrote it) as {name,
    description, input_schema} (`inputSchema`; `input_schema` or a Responses API tool's
    `parameters` too); what has no such shape is kept as it is, for the import to degrade.
    Codex names a namespaced tool's calls by the tool's own name, so the namespace's name
    is no tool's."""
    found: list[Any] = []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("type") == "namespace" \
                and isinstance(entry.get("tools"), list):
            found.extend(_dynamic_tool(tool) for tool in entry["tools"])
        else:
            found.append(_dynamic_tool(entry))
    return found


def _dynamic_tool(entry: Any) -> Any:
    if not isinstance(entry, dict) or entry.get("type", "function") != "function":
        return entry
    schema = next((entry[k] for k in SCHEMA_KEYS if k in entry), None)
    name = entry.get("name")
    return {"name": tool_name(name) if isinstance(name, str) else name,
            "description": entry.get("description") or None, "input_schema": schema}


def _ends_waiting(entry: dict[str, Any]) -> bool:
    """A line after which no output answers the calls still open: the turn ended, or the
    conversation was rolled back or compacted."""
    payload = entry.get("payload")
    kind = payload.get("type") if isinstance(payload, dict) else None
    return entry.get("type") == "compacted" or (entry.get("type") == "event_msg" and kind in (
        "thread_rolled_back", "task_complete", "turn_complete", "task_started",
        "turn_started"))


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


def _type(item: Any) -> str | None:
    """An item's `type` when it is text (a set is asked whether it holds it)."""
    kind = item.get("type") if isinstance(item, dict) else None
    return kind if isinstance(kind, str) else None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _reasoning(item: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {
        "summary": [s.get("text") for s in _list(item.get("summary")) if isinstance(s, dict)]}
    if item.get("content"):
        kept["content"] = [c.get("text") for c in _list(item["content"]) if isinstance(c, dict)]
    if item.get("encrypted_content"):
        kept["encrypted_content"] = item["encrypted_content"]
    return kept


def _within_budget(kept: list[dict[str, Any]], adding: list[dict[str, Any]]
                   ) -> list[dict[str, Any]]:
    """Reasoning items as a message keeps them after those it `kept`: each one's encrypted
    content verbatim while the message's stays within ENCRYPTED_KEPT characters, else
    its size."""
    room = ENCRYPTED_KEPT - sum(len(r["encrypted_content"]) for r in kept
                                if isinstance(r.get("encrypted_content"), str))
    taken = []
    for item in adding:
        content = item.get("encrypted_content")
        if isinstance(content, str) and len(content) > room:
            item = {**{k: v for k, v in item.items() if k != "encrypted_content"},
                    "encrypted_content_chars": len(content)}
        elif isinstance(content, str):
            room -= len(content)
        taken.append(item)
    return taken


def _standing_in(item: dict[str, Any]) -> bool:
    """Whether a replacement history's first item is one a summary can hold: a message
    or a compaction item (a call or an output has to be a turn of its own)."""
    return item.get("type") == "message" or _type(item) in COMPACTION_ITEMS


def _stand_in(item: dict[str, Any], file: str, line: int) -> tuple[str, dict[str, Any]]:
    """The summary's text and metadata for the item it holds: a message's text (its role
    kept; a summary holds no images), or a compaction item's mention."""
    if _type(item) in COMPACTION_ITEMS:
        return _compaction_item(item)
    blocks = _content(item.get("content"), file, line)
    meta: dict[str, Any] = {"role": item.get("role")}
    if item.get("role") == "user" and _contextual(blocks):
        meta["contextual"] = True
    left_out = [b["type"] for b in blocks if b["type"] != "text"]
    if left_out:
        meta["left_out_of_summary"] = left_out
    return "\n\n".join(b["text"] for b in blocks if b["type"] == "text"), meta


def _compaction_item(item: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A compaction item (Codex's remote summary, encrypted by OpenAI) as a named opaque
    mention; its content kept verbatim in metadata."""
    content = item.get("encrypted_content")
    size = len(content) if isinstance(content, str) else 0
    return COMPACTION_MENTION.format(item.get("type"), size), {
        "compaction_item": {"type": item.get("type"), "encrypted_content": content}}


def _texts(history: list[dict[str, Any]]) -> list[str]:
    return [c["text"] for item in history if isinstance(item.get("content"), list)
            for c in item["content"] if isinstance(c, dict) and isinstance(c.get("text"), str)]
