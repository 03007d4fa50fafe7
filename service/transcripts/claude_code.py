"""Claude Code session files (`~/.claude/projects/<project>/<session>.jsonl`) as a Transcript.

How the entries map (docs/guides/importing-sessions.md):
- chain records (`uuid`, `parentUuid`) are read in file order; a uuid seen again (a
  resumed session's copies) is the entry already read;
- the entries of one API response (one block each, chained, sharing `message.id`) are
  one assistant message, also when tools ran while it streamed and their results were
  written between its entries (the next entry then hangs from a result): the results
  are one tool message after it;
- a user entry holding tool_result blocks is a tool message answering its parent's tool
  uses; the results of parallel tool calls (each a child of its own tool_use entry) are
  one tool message;
- a sub-agent's run Claude Code 1.0 wrote into the session file itself (`isSidechain`
  entries from a root whose prompt is a Task/Agent tool use's `prompt`) is a spawned
  side branch of the message holding that tool use, as a `subagents/` file is
  (subagents.py): never HEAD, a branch tip or the user's conversation;
- an API error Claude Code wrote in its model's place (`isApiErrorMessage`, model
  `<synthetic>`) is a reply kept out of the context (Turn.out_of_context), as the tool
  leaves it out of what it sends;
- system and progress records, and bookkeeping lines, are not turns: a record's children
  hang from the turn it hangs from, so they make no branches; a second user-typed child is
  a real branch (a rewind or an edit);
- what the tool sent its model for an attachment record (the copy it keeps, `rendered`;
  before it kept one, a queued prompt's text) is read on the user's side, where the tool
  puts it: in the tool message the record follows; in the prompt it follows, before the
  prompt's text (the tool moves it above); as a user turn of its own (`is_meta`) after a
  compaction's summary; and after a reply with the message that follows (before a prompt,
  after a tool message's results, or as a user turn of its own before a reply); the
  record's children hang from the turn holding what it gave;
- a compaction (a `compact_boundary` system record, then the `isCompactSummary` user
  entry) is a summary of the chain up to the boundary's logical parent (the last entry
  before the boundary when the file lacks it), or up to the head of its
  `preservedSegment`, whose entries the tool kept after its summary: written where they
  happened, or first written after the summary, under it; the conversation goes on
  below the last entry the tool kept.
HEAD is the last chain record, or a `last-prompt` leaf written after it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import PurePath
from typing import Any

from .building import ROOT as _ROOT, Building as _Building, key_at, \
    merge_meta, opener, text_block, tool_use, turns_of
from ..errors import BadInput
from .jsonl import objects
from .model import Compaction, DegradedKind, Mode, Transcript, Turn, bad_line, no_turns, \
    timestamp, tool_use_id

TOOL = "claude-code"
SPAWNING = {"Task", "Agent"}  # the tools whose use runs a sub-agent on its `prompt`
CHAIN = {"user", "assistant", "system", "attachment", "progress"}
SYNTHETIC = "<synthetic>"  # the model an entry Claude Code wrote itself names
BOOKKEEPING = {"queue-operation", "file-history-snapshot", "last-prompt", "ai-title",
               "custom-title", "agent-name", "mode", "permission-mode", "pr-link", "summary"}


def _api_error(entry: dict[str, Any], message: dict[str, Any]) -> bool:
    """Whether an assistant entry is the API error Claude Code wrote in its model's place,
    which it leaves out of every request it sends (its messages-for-the-API filter: these
    two marks, both)."""
    return entry.get("isApiErrorMessage") is True and message.get("model") == SYNTHETIC


def looks_like(first: dict[str, Any]) -> bool:
    """A first line of a kind a newer Claude Code writes (bookkeeping it names its session
    in) counts too."""
    return first.get("type") in BOOKKEEPING or (
        isinstance(first.get("type"), str) and ("uuid" in first or "sessionId" in first))


def parse(text: str, file: str, mode: Mode | None = None) -> Transcript:
    mode = mode if mode is not None else Mode(strict=True)
    reader = _Reader(file, mode)
    for line, entry in objects(text, file, mode):
        reader.take(line, entry)
    return reader.transcript(PurePath(file).stem or reader.session_key)


class Parsing:
    """A parse kept to read the lines a file gains (reading.py): `take` each line, in file
    order, and `transcript` at any point, which changes nothing of what was read; a turn
    no later line changed keeps its Turn (building.turns_of)."""

    def __init__(self, file: str, mode: Mode) -> None:
        self.reader = _Reader(file, mode)
        self.made: list[Turn] = []

    @property
    def turns(self) -> list[_Building]:
        return self.reader.turns

    def take(self, line: int, entry: dict[str, Any]) -> None:
        self.reader.take(line, entry)

    def transcript(self) -> Transcript:
        reader = self.reader
        return reader.transcript(PurePath(reader.file).stem or reader.session_key, self.made)


class _Reader:
    def __init__(self, file: str, mode: Mode) -> None:
        self.file = file
        self.mode = mode
        self.turns: list[_Building] = []
        self.node_of: dict[str, int] = {}  # entry uuid -> the turn it is or hangs from
        self.compactions: list[tuple[int, int, int, str, datetime, tuple[str, ...], dict]] = []
        self.boundary: dict[str, Any] | None = None
        self.last: str | None = None
        self.latest: dict[bool, str] = {}  # sidechain or not -> the last chain record read
        self.title: str | None = None
        self.session_key: str = ""
        self.at: datetime | None = None
        self.agent_uses: dict[str, str] = {}  # sub-agent id -> the tool use it answered
        self.request_of: dict[int, Any] = {}  # assistant turn -> its response's requestId
        self.kept: _Kept | None = None  # a compaction's kept entries, still to be read
        # A spawning tool use's prompt -> (the assistant turn holding it, its id), and the
        # entry being read when it is a turn of a sub-agent run written inline: (the
        # spawning turn, what its first turn's metadata says of the agent).
        self.spawns: dict[str, tuple[int, str]] = {}
        self.inline: tuple[int, dict[str, Any]] | None = None
        # What attachments after a reply (or before the first message) gave the model to
        # read, waiting for the message that follows: turn index -> what each gave.
        self.attached: dict[int, list[_Attached]] = {}
        # A user turn -> how many of its first blocks attachments gave (what the user typed
        # follows them; a later attachment joins after them, in file order).
        self.leading: dict[int, int] = {}

    def take(self, line: int, entry: dict[str, Any]) -> None:
        kind = entry["type"]
        if kind in BOOKKEEPING:
            leaf = entry.get("leafUuid")
            if kind == "last-prompt" and isinstance(leaf, str) and leaf in self.node_of:
                self.last = entry["leafUuid"]  # the newest of it and the chain records wins
            for key in ("customTitle", "aiTitle"):
                if isinstance(entry.get(key), str) and entry[key].strip():
                    self.title = entry[key].strip()[:200]
            return
        if kind not in CHAIN and "uuid" not in entry:
            return  # bookkeeping of a kind not read: every chain record carries a uuid
        if kind not in CHAIN:
            self.mode.degrade(self.file, line, DegradedKind.UNKNOWN_ENTRY,
                              f"unknown entry type {kind!r} (known: "
                              f"{', '.join(sorted(CHAIN | BOOKKEEPING))})")
            uuid, parent_uuid = entry.get("uuid"), entry.get("parentUuid")
            if isinstance(uuid, str) and uuid not in self.node_of:
                # bookkeeping: what names it as its parent hangs from what it hangs from
                self.node_of[uuid] = self.node_of.get(parent_uuid, _ROOT)
            return
        uuid, parent_uuid = entry.get("uuid"), entry.get("parentUuid")
        if not isinstance(uuid, str) or not uuid:
            raise bad_line(self.file, line, f"a {kind} entry without a uuid")
        if uuid in self.node_of:
            return  # a copy of an entry read already (a resumed session's history)
        parent = self._parent(uuid, entry, line)
        self.inline = self._inline(entry, parent)
        self.session_key = self.session_key or str(entry.get("sessionId") or "")
        self.at = timestamp(entry.get("timestamp"), self.at, self.file, line)
        if not entry.get("isSidechain"):
            self.last = uuid
        if kind == "system" and entry.get("subtype") == "compact_boundary":
            self._boundary(line, uuid, entry)
        elif kind == "user" and entry.get("isCompactSummary"):
            self._summary(line, uuid, entry, parent)
        elif kind == "user":
            self._user(line, uuid, entry, parent)
        elif kind == "assistant":
            self._assistant(line, uuid, entry, parent)
        elif kind == "attachment":
            self._attachment(line, uuid, entry, parent)
        else:
            self.node_of[uuid] = parent  # not a turn: its children hang from its parent
        self.latest[bool(entry.get("isSidechain"))] = uuid
        if self.kept is not None and uuid == self.kept.tail:
            self._kept_in(self.kept)

    def _parent(self, uuid: str, entry: dict[str, Any], line: int) -> int:
        if self.kept is not None and uuid == self.kept.head:
            # The first entry a compaction kept, written after its summary: it goes on
            # where the summarized chain ends (as the tool relinks it to the anchor).
            return self.kept.after
        before = self.latest.get(bool(entry.get("isSidechain")))
        if "parentUuid" not in entry:
            return self.node_of[before] if before else _ROOT  # a chain in file order
        parent_uuid = entry["parentUuid"]
        if parent_uuid is None:
            return _ROOT
        if not isinstance(parent_uuid, str) or parent_uuid not in self.node_of:
            self.mode.degrade(self.file, line, DegradedKind.DETACHED,
                              f"parentUuid {parent_uuid!r} names no earlier entry")
            return self.node_of[before] if before else _ROOT
        return self.node_of[parent_uuid]

    def _inline(self, entry: dict[str, Any], parent: int) -> tuple[int, dict[str, Any]] | None:
        """The spawning turn of a sidechain entry of a sub-agent run written inline: its
        parent's, or (a run's first entry) the one whose tool use's prompt it is."""
        if not entry.get("isSidechain"):
            return None
        if parent != _ROOT:
            turn = self.turns[parent]
            return (turn.caller, {}) if turn.side_branch and turn.caller is not None else None
        message = entry.get("message")
        prompt = _text_of(message.get("content")) if isinstance(message, dict) else ""
        spawned = self.spawns.get(prompt.strip())
        if spawned is None:
            return None
        return spawned[0], {"agent": {"tool_use_id": spawned[1], "linked": True,
                                      "inline": True}}

    # --- records ----------------------------------------------------------------------

    def _boundary(self, line: int, uuid: str, entry: dict[str, Any]) -> None:
        logical = entry.get("logicalParentUuid")
        if not isinstance(logical, str) or logical not in self.node_of:
            # The tool names an entry it never wrote: it compacted what it had written.
            logical = self.latest.get(bool(entry.get("isSidechain")))
        self.node_of[uuid] = self.node_of.get(logical or "", _ROOT)
        metadata = entry.get("compactMetadata")
        self.boundary = {"uuid": uuid, "line": line,
                         "meta": metadata if isinstance(metadata, dict) else {}}

    def _summary(self, line: int, uuid: str, entry: dict[str, Any], parent: int) -> None:
        boundary, self.boundary = self.boundary or {"uuid": None, "meta": {}}, None
        message = entry.get("message")
        text = _text_of(message.get("content") if isinstance(message, dict) else None)
        kept, self.kept = _Kept.of(boundary["meta"].get("preservedSegment"), uuid), None
        last_covered = compacted_head = parent
        if kept is not None:
            if kept.head in self.node_of:  # written before the summary, where they happened
                last_covered = self.turns[self.node_of[kept.head]].parent
            elif kept.tail in self.node_of:
                raise bad_line(self.file, line, "the compaction's preservedSegment holds its "
                               "tail but not its head before the summary")
            compacted_head = self.node_of.get(kept.tail, last_covered)
        for anchor in (kept.anchors if kept else (uuid,)):
            self.node_of[anchor] = compacted_head  # what hung from the anchor follows the tail
        entries = tuple(e for e in (boundary["uuid"], uuid) if e)
        meta = {"compaction": {k: v for k, v in boundary["meta"].items()
                               if k in ("trigger", "preTokens", "postTokens", "preservedSegment")}}
        if last_covered == _ROOT:
            # Nothing of this file before it (its logical parent lives in an earlier file):
            # the summary is what the model read first, a user turn.
            self._add(_Building("user", parent, line, self.at, None,
                                [{"type": "text", "text": text}], list(entries),
                                {**meta, "compact_summary": True}), uuid)
            return
        self.compactions.append((line, last_covered, compacted_head, text, self.at, entries,
                                 meta))
        if kept is not None and kept.tail not in self.node_of:
            # Written after the summary, re-parented under it: the segment ends at its tail.
            self.kept = replace(kept, compaction=len(self.compactions) - 1, after=last_covered)

    def _kept_in(self, kept: _Kept) -> None:
        line, covered, _, text, at, entries, meta = self.compactions[kept.compaction]
        compacted_head = self.node_of[kept.tail]
        self.compactions[kept.compaction] = (line, covered, compacted_head, text, at, entries,
                                             meta)
        for anchor in kept.anchors:
            self.node_of[anchor] = compacted_head
        self.kept = None

    def _user(self, line: int, uuid: str, entry: dict[str, Any], parent: int) -> None:
        blocks, meta = self._blocks(entry, line)
        results = [b for b in blocks if b["type"] == "tool_result"]
        if not results:
            if not blocks:
                self.node_of[uuid] = parent
                return
            if entry.get("isMeta"):
                meta["is_meta"] = True
            self._add(_Building("user", parent, line, self.at, None, blocks, [], meta), uuid)
            return
        blocks = results + [b for b in blocks if b["type"] != "tool_result"]
        answered = [b["tool_use_id"] for b in results]
        ran = entry.get("toolUseResult")
        if isinstance(ran, dict) and isinstance(ran.get("agentId"), str) and len(answered) == 1:
            self.agent_uses[ran["agentId"]] = answered[0]  # the sub-agent that answered it
        opens = opener(self.turns, parent)
        if opens is None or not set(answered) <= set(self.turns[opens].tool_uses()):
            self.mode.degrade(self.file, line, DegradedKind.INVALID_BLOCK,
                              f"tool results for {', '.join(answered)} answer no tool use "
                              "of the message they follow: kept as text")
            mentioned = [_unanswering(b) if b["type"] == "tool_result" else b for b in blocks]
            self._add(_Building("user", parent, line, self.at, None, mentioned, [], meta), uuid)
            return
        tool = self._open_tool_message(opens, answered)
        if tool is None:
            self._add(_Building("tool", opens, line, self.at, None, blocks, [], meta), uuid)
            return
        merged = self.turns[tool]
        done = len(merged.answered())
        merged.blocks = merged.blocks[:done] + results + merged.blocks[done:] + \
            [b for b in blocks if b["type"] != "tool_result"]
        merged.entries.append(uuid)
        merged.changed = True
        self.node_of[uuid] = tool

    def _assistant(self, line: int, uuid: str, entry: dict[str, Any], parent: int) -> None:
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        message_id = message.get("id") if isinstance(message.get("id"), str) else None
        blocks, meta = self._blocks(entry, line)
        response = self._response_of(parent, message_id, entry.get("requestId"))
        if response is not None:
            building = self.turns[response]
            building.blocks += blocks
            building.entries.append(uuid)
            merge_meta(building.meta, meta)
            building.changed = True
            self.node_of[uuid] = parent  # its children follow the results written so far
            self._spawning(response, blocks)
            return
        if not blocks:
            self.node_of[uuid] = parent
            return
        for key in ("model", "stop_reason", "usage"):
            if message.get(key) is not None:
                meta[key] = message[key]
        self._add(_Building("assistant", parent, line, self.at, message_id, blocks, [], meta,
                            out_of_context=_api_error(entry, message)), uuid)
        self.request_of[len(self.turns) - 1] = entry.get("requestId")
        self._spawning(len(self.turns) - 1, blocks)

    def _spawning(self, turn: int, blocks: list[dict[str, Any]]) -> None:
        for b in blocks:
            prompt = b["input"].get("prompt") if b["type"] == "tool_use" else None
            if b.get("name") in SPAWNING and isinstance(prompt, str) and prompt.strip():
                self.spawns.setdefault(prompt.strip(), (turn, b["id"]))

    def _response_of(self, parent: int, message_id: str | None, request_id: Any) -> int | None:
        """The assistant message an entry of response `message_id` belongs to: its parent,
        or the message whose tool results it follows (tools ran while it streamed)."""
        if parent == _ROOT or message_id is None:
            return None
        if self.turns[parent].role == "tool":
            parent = self.turns[parent].parent
            if parent == _ROOT:
                return None
        turn, known = self.turns[parent], self.request_of.get(parent)
        same = turn.role == "assistant" and turn.message_id == message_id and \
            (request_id is None or known is None or request_id == known)
        return parent if same else None

    # --- helpers ----------------------------------------------------------------------

    def _attachment(self, line: int, uuid: str, entry: dict[str, Any], parent: int) -> None:
        """An attachment record: what the tool sent its model for it is read where the tool
        puts it, on the user's side of the conversation: in the tool message it follows,
        in the prompt it follows before the prompt's text (Claude Code moves attachments
        above the user messages before them, up to the last reply or tool message), as a
        user turn of its own after a compaction's summary, and after a reply (or before the
        first message) with the message that follows (attached). Its children hang from the
        turn holding what it gave (while that waits, from the turn it hangs from)."""
        self.node_of[uuid] = parent
        blocks, meta = _read_by_model(entry, self.mode, self.file, line)
        if not blocks:
            return
        kind = entry["attachment"].get("type") if isinstance(entry.get("attachment"), dict) \
            else None
        meta = {**meta, "attachments": [{"uuid": uuid, "type": kind}]}
        turn = self.turns[parent] if parent != _ROOT else None
        if turn is not None and turn.role == "tool":
            turn.blocks += blocks
            merge_meta(turn.meta, meta)
            turn.changed = True
        elif turn is not None and turn.role == "user" and not turn.meta.get("compact_summary"):
            # The tool moves it above the prompt, after what attachments before gave.
            at = self.leading.get(parent, 0)
            turn.blocks = turn.blocks[:at] + blocks + turn.blocks[at:]
            self.leading[parent] = at + len(blocks)
            merge_meta(turn.meta, meta)
            turn.changed = True
        elif turn is not None and turn.role == "user":
            self._add(_Building("user", parent, line, self.at, None, blocks, [],
                                {**meta, "is_meta": True}), uuid)
            self.leading[len(self.turns) - 1] = len(blocks)
        else:
            self.attached.setdefault(parent, []).append(
                _Attached(uuid, line, self.at, blocks, meta))

    def _add(self, building: _Building, uuid: str) -> None:
        attached = self.attached.pop(building.parent, None) \
            if not building.meta.get("compact_summary") else None
        read = [b for a in attached or () for b in a.blocks]
        if attached and building.role == "assistant":
            # Read by the model before this reply: a user turn of its own before it.
            first = attached[0]
            self._add(_Building("user", building.parent, first.line, first.at, None, read,
                                [a.uuid for a in attached[:-1]],
                                {**_attachments_meta(attached), "is_meta": True}),
                      attached[-1].uuid)
            building.parent = len(self.turns) - 1
            self.leading[building.parent] = len(read)
            self.node_of.update({a.uuid: building.parent for a in attached})
        elif attached:
            # Before a prompt, after the results of a tool message, as the tool sends them.
            if building.role == "tool":
                building.blocks = building.blocks + read
            else:
                building.blocks = read + building.blocks
                self.leading[len(self.turns)] = len(read)
            merge_meta(building.meta, _attachments_meta(attached))
        if self.inline is not None:
            building.caller, building.side_branch = self.inline[0], True
            building.meta.update(self.inline[1])
        building.entries.append(uuid)
        self.turns.append(building)
        self.node_of[uuid] = len(self.turns) - 1

    def _open_tool_message(self, opener: int, answering: list[str]) -> int | None:
        """The tool message after `opener` still collecting results (parallel tool calls)."""
        for index in range(len(self.turns) - 1, opener, -1):
            turn = self.turns[index]
            if turn.parent == opener and turn.role == "tool":
                done = set(turn.answered())
                if not done & set(answering) and done < set(self.turns[opener].tool_uses()):
                    return index
                return None
        return None

    def _blocks(self, entry: dict[str, Any], line: int) -> tuple[list[dict], dict[str, Any]]:
        message = entry.get("message")
        if not isinstance(message, dict):
            raise bad_line(self.file, line, f"a {entry['type']} entry without a message")
        return blocks_of(message.get("content"), self.file, line)

    def transcript(self, session_key: str, made: list[Turn] | None = None) -> Transcript:
        if not self.turns:
            raise no_turns(self.file)
        turns = self.turns
        compactions = tuple(Compaction(entries[-1], key_at(turns, covered), key_at(turns, head),
                                       text, at, line, entries, meta)
                            for line, covered, head, text, at, entries, meta in self.compactions)
        head = self.node_of.get(self.last or "", len(turns) - 1)
        return Transcript(TOOL, self.file, session_key, turns_of(turns, made), compactions,
                          key_at(turns, head if head != _ROOT else len(turns) - 1),
                          self.title, {"agent_tool_uses": self.agent_uses})


@dataclass(frozen=True)
class _Attached:
    """What an attachment record gave the model, waiting for the message it joins."""

    uuid: str
    line: int
    at: datetime
    blocks: list[dict[str, Any]]
    meta: dict[str, Any]


@dataclass(frozen=True)
class _Kept:
    """A compaction's `preservedSegment`: the entries it kept verbatim after its summary,
    `head` to `tail`; what hung from an anchor (the summary, or the uuid the tool names)
    follows the tail. While the tail is still to be read, `after` is the turn the head
    goes on from and `compaction` the summary's index."""

    head: str
    tail: str
    anchors: tuple[str, ...]
    compaction: int = -1
    after: int = _ROOT

    @staticmethod
    def of(preserved: Any, summary: str) -> _Kept | None:
        if not isinstance(preserved, dict):
            return None
        head, tail, anchor = (preserved.get(k) for k in ("headUuid", "tailUuid", "anchorUuid"))
        if not isinstance(head, str) or not isinstance(tail, str):
            return None
        return _Kept(head, tail, (summary, anchor) if isinstance(anchor, str) else (summary,))


def blocks_of(content: Any, file: str, line: int) -> tuple[list[dict], dict[str, Any]]:
    """A message's content (a string or Anthropic blocks) as the blocks the ledger stores,
    and what the node's metadata keeps of what it cannot store (renamed tools and ids,
    unsigned thinking, block kinds it has no place for)."""
    meta: dict[str, Any] = {}
    if isinstance(content, str):
        return ([{"type": "text", "text": content}] if content.strip() else []), meta
    if not isinstance(content, list):
        raise bad_line(file, line, "message content is neither text nor a list of blocks")
    blocks = [b for b in (_block(item, meta, file, line) for item in content) if b]
    return blocks, meta


def _block(item: Any, meta: dict[str, Any], file: str, line: int) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        raise bad_line(file, line, "a content block is not an object")
    kind = item.get("type")
    if kind == "text":
        return text_block(item)
    if kind == "thinking":
        if isinstance(item.get("signature"), str) and item["signature"].strip():
            return {"type": "thinking", "thinking": str(item.get("thinking", "")),
                    "signature": item["signature"]}
        meta["unsigned_thinking"] = meta.get("unsigned_thinking", 0) + 1
        return None
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": item.get("data")}
    if kind == "tool_use":
        return tool_use(item.get("id"), item.get("name"), item.get("input"), meta, "input")
    if kind == "tool_result":
        raw = str(item.get("tool_use_id"))
        content = item.get("content", "")
        if isinstance(content, list):
            content = [part for part in (_block(p, meta, file, line) for p in content) if part]
        return {"type": "tool_result", "tool_use_id": tool_use_id(raw),
                "content": content if content else [], "is_error": bool(item.get("is_error"))}
    if kind in ("image", "document"):
        shaped = {"type": kind, "source": item.get("source")}
        if kind == "document" and isinstance(item.get("title"), str):
            shaped["title"] = item["title"]
        return shaped
    meta.setdefault("unmapped_blocks", []).append(str(kind))
    return None


def _read_by_model(entry: dict[str, Any], mode: Mode, file: str,
                   line: int) -> tuple[list[dict], dict[str, Any]]:
    """What the model read for an attachment record: the copy Claude Code keeps of what
    it sent (`rendered`, each part's `content`); in a file written before it kept one, a
    queued prompt's own text (without the words the tool put around it), else nothing."""
    rendered = entry.get("rendered")
    attachment = entry.get("attachment") if isinstance(entry.get("attachment"), dict) else {}
    if isinstance(rendered, list):
        parts = [part.get("content") for part in rendered if isinstance(part, dict)]
    elif attachment.get("type") == "queued_command":
        parts = [attachment.get("prompt")]
    else:
        return [], {}
    blocks: list[dict] = []
    meta: dict[str, Any] = {}
    for content in parts:
        if content is None:
            continue
        try:
            read, more = blocks_of(content, file, line)
        except BadInput as e:
            mode.degrade(file, line, DegradedKind.INVALID_BLOCK,
                         f"an attachment's content left out: {e.message}")
            continue
        blocks += [b for b in read if b["type"] in ("text", "image", "document")]
        merge_meta(meta, more)
    return blocks, meta


def _attachments_meta(attached: list[_Attached]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for a in attached:
        merge_meta(meta, a.meta)
    return meta


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(b["text"] for b in content
                           if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _unanswering(result: dict[str, Any]) -> dict[str, Any]:
    """A tool_result that answers nothing the file holds, as the text it carried."""
    content = result.get("content")
    text = content if isinstance(content, str) else _text_of(content)
    return {"type": "text", "text": f"[tool result {result.get('tool_use_id')} (its tool use "
                                    f"is not in the file)]\n{text}".rstrip()}
