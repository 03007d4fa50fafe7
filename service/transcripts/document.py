"""A Transcript as ctxdag's session backup document (service/store/backup.py, version 5).

The conventions (docs/guides/importing-sessions.md):
- ROOT is the system node holding the system prompt the file records (Codex's
  `base_instructions`), empty when it records none (Claude Code, Pi);
- a tool use the source left unanswered gets a stored cancelled `is_error` result, marked
  `synthetic` in its node's metadata: a tool message of its own after the assistant
  message (between it and whatever the source put there instead), or results added to
  the tool message that answered only some of the tool uses;
- each compaction is a summary spliced after ROOT covering the chain ROOT → its
  `last_covered`, relaying (absorbing) the previous summary when that one's segment
  starts it; the last compaction is the active one (strategy rolling), the others are
  superseded; an empty summary reads so and says so in its metadata;
- HEAD is the tool's head (its synthetic result when it ends on open tool uses);
- a reply the tool kept out of its model's context (`Turn.out_of_context`) is stored with
  `out_of_context: true`, and so is every tool message answering it: no render reads them;
- a sub-agent's turns (subagents.py) are side-branch nodes pointing CALLER at the turn
  that spawned them, numbered after the transcript's own.
- the source's labels are the nodes' labels (labeled_at: the label entry's time); the
  nodes whose label the source cleared are listed under `unlabeled` (UNLABELED), the one
  key a transcript's document has beyond a backup's, so that a grown file clears them.
Every node's metadata names its source: {"source": {tool, file, entries, line}}; the
session's `source` property says where it came from (origin.py), its title is the one the
source gives.
The tools a file names (Transcript.tools: a Codex session_meta's dynamic_tools) are the
session's tool set: one session-wide version (1, created at the naming line's time, no
tool_choice) offering those the ledger takes (service/turns/requests.py's rules), in the
canonical JSON text a call records (models.tools_json); each definition it refuses is,
unless the Mode is strict, left out and degraded as INVALID_TOOL. The source notes the
hash of what was taken (TOOLS_SHA256), so a grown file naming other tools is seen
(service/store/transcripts.py adds a version then).
A block the ledger refuses (a placeholder image URL, media it cannot hold) is, unless the
Mode is strict, a text block mentioning it (OMITTED), degraded as INVALID_BLOCK; a
tool_result keeps its place and loses only the parts refused.
"""
from __future__ import annotations

import hashlib
import json
import operator
from dataclasses import replace
from datetime import datetime
from typing import Any, Callable

from ..errors import BadInput
from ..model import blocks as block_rules
from ..store.backup import FORMAT, VERSION
from ..store.transcripts import DIGEST, UNLABELED, mapping_digest
from ..model.validate import Limits
from ..tokens import estimate_tokens
from ..model import listing
from ..model.models import tools_json
from ..model.validate import shown
from ..store import records
from ..store.transcripts import TOOLS_SHA256
from ..turns.requests import MAX_TOOLS, tool_definitions
from . import origin
from .model import (
    ROOT_KEY, Compaction, Degraded, DegradedKind, Mode, NamedTools, Transcript, Turn,
    bad_line, cancelled_result, node_id, session_id,
)

EMPTY_SUMMARY = "[The tool recorded this compaction without a readable summary.]"
OMITTED = "[{kind} omitted on import: {reason}]"
SYNTHETIC_PREFIX = "synthetic:"


class Memo:
    """The node rows a document built for its turns, kept for the next document of the same
    file (reading.py): a turn that is the same Turn (building.turns_of keeps it while no
    line changes it) at the same place (seq, depth, read or not) has the same row, so a
    grown file checks and maps only the turns it changed. What building a row degraded is
    kept with it and degraded again when the row is taken. The turns the pairing of tool
    uses makes (a synthetic result, a tool message given the results it lacked, a turn
    re-hung below a synthetic result) are kept too, each with what it was made from, so a
    grown file's pairing gives them again as the same Turns."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[Turn, tuple[Any, ...], dict[str, Any], list[dict[str, Any]],
                                   list[Degraded]]] = {}
        self.built = 0  # rows built (not taken from the memo): what tests count
        self.ids: dict[str, str] = {}  # a turn's (or summary's) key -> its node id
        self.paired: dict[str, tuple[tuple[Any, ...], Turn]] = {}  # _paired's, by its key
        self.layout: _Layout | None = None  # the last document's
        # The last whole rows (Plan.rows of every seq): of which layout, the rows, their
        # media, what taking them degraded.
        self.last_rows: tuple[_Layout, list[dict[str, Any]], dict[str, dict[str, Any]],
                              list[Degraded]] | None = None

    def __getstate__(self) -> dict[str, Any]:
        # A reading kept on disk (kept.py) keeps the rows, not the last layout and rows.
        return {**self.__dict__, "layout": None, "last_rows": None}

    def take(self, turn: Turn, place: tuple[Any, ...], mode: Mode
             ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        kept = self.rows.get(turn.key)
        if kept is None or kept[1] != place or kept[0] is not turn:
            return None
        mode.degraded.extend(kept[4])
        return kept[2], kept[3]  # the same row: nothing downstream changes a row it is given


def document(transcript: Transcript, tenant: str, limits: Limits,
             source: dict[str, Any] | None = None, mode: Mode | None = None,
             memo: Memo | None = None) -> dict[str, Any]:
    """`source`: where the session came from (origin.py; what the transcript alone says
    when None); `memo`: the rows an earlier document of the same file built."""
    mode = mode if mode is not None else Mode(strict=True)
    planned = plan(transcript, tenant, limits, source, mode, memo)
    nodes, media = planned.rows(0, planned.size, mode)
    return {**planned.header, "nodes": nodes,
            "media": sorted(media.values(), key=lambda m: m["sha256"])}


class Plan:
    """A transcript's document but its node rows, which `rows` builds a part at a time (in
    file order, ROOT first): an importer of a large file holds one part's rows at once
    (service/transcripts/streamed.py). `header` is the document without `nodes` and
    `media`; `size` the number of node rows; `roles` each node's role by id."""

    def __init__(self, transcript: Transcript, tenant: str, limits: Limits,
                 source: dict[str, Any] | None, mode: Mode, memo: Memo | None) -> None:
        t = transcript
        self.transcript, self.limits, self.memo = t, limits, memo
        source_of = source or origin.describe(t, ())
        self.sid = sid = session_id(tenant, t.tool, t.session_key)
        tools = _tools(t.tools, t.file, mode)
        if tools is not None:
            source_of = {**source_of, TOOLS_SHA256: tools[1]}
        last = memo.layout if memo is not None else None
        layout = (last is not None and _Layout.grown(last, t, tenant, memo)) or \
            _Layout.of(t, tenant, sid, memo)
        if memo is not None:
            memo.layout = layout
        self.layout, self.roles = layout, layout.roles
        ids, head, active = layout.ids, layout.head, layout.last_summary
        self.root = _root(sid, ids[ROOT_KEY], t, limits, layout.started)
        self.root["properties"][DIGEST] = mapping_digest(self.root)
        self.size = 1 + len(layout.ordered)
        properties = {
            "id": sid, "extra_meta": "{}", "source": origin.dumps(source_of),
            "created_at": _stamp(layout.started), "updated_at": _stamp(layout.latest),
            "next_seq": self.size, "summary_strategy": "rolling",
            "summary_version": len(t.compactions), "meta_version": 0,
            **{key: _stamp(value) if isinstance(value, datetime) else value
               for key, value in listing.from_source(source_of).items()},
        }
        if source_of["title"]:
            properties["title"] = source_of["title"]
        offered = {} if tools is None else {
            "tool_sets": [{"sha256": tools[1], "tools": tools[0]}],
            "tool_set_versions": [{"properties": {"version": 1, "tools_sha256": tools[1],
                                                  "created_at": _stamp(t.tools.at)}}]}
        self.header = {
            "format": FORMAT, "version": VERSION, **offered,
            "session": {"properties": properties, "root_id": ids[ROOT_KEY],
                        "head_id": ids[head],
                        "active_summary_id": active[0] if active else None},
            "calls": [], "branch_names": [], "pins": [],
            "labels": sorted(({"node_id": ids[label.key], "properties": {
                "text": label.text, "labeled_at": _stamp(label.at)}}
                for label in t.labels if label.text is not None), key=lambda l: l["node_id"]),
            UNLABELED: sorted(ids[label.key] for label in t.labels if label.text is None)}

    def rows(self, start: int, stop: int, mode: Mode
             ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
        """The node rows at positions [start, stop) (seq order: ROOT at 0) and the media
        they carry by sha256; what building them degraded is added to `mode`."""
        nodes: list[dict[str, Any]] = []
        media: dict[str, dict[str, Any]] = {}
        if start == 0:
            nodes.append(self.root)
        t, memo, layout = self.transcript, self.memo, self.layout
        whole = start == 0 and stop >= self.size and memo is not None
        degraded_before = len(mode.degraded)
        first = max(start, 1)
        if whole and memo.last_rows is not None and memo.last_rows[0] is layout.base:
            # The layout only grew since the rows of the last one: theirs are these rows.
            _, kept, kept_media, kept_degraded = memo.last_rows
            nodes += kept[1:]
            media.update(kept_media)
            mode.degraded.extend(kept_degraded)
            first = len(kept)
        for seq in range(first, min(stop, self.size)):
            if seq in layout.summaries:
                nodes.append(_covering(layout.summaries[seq]))
                continue
            turn = layout.turns[layout.ordered[seq - 1][3]]
            place = (seq, layout.depth[turn.key], turn.key in layout.unread)
            taken = memo.take(turn, place, mode) if memo is not None else None
            if taken is None:
                built = Mode(mode.strict)
                taken = _turn_row(self.sid, layout.ids, t, turn, place, self.limits, built)
                mode.degraded.extend(built.degraded)
                if memo is not None:
                    memo.rows[turn.key] = (turn, place, taken[0], taken[1], built.degraded)
                    memo.built += 1
            nodes.append(taken[0])
            for medium in taken[1]:
                media.setdefault(medium["sha256"], medium)
        if whole:
            memo.last_rows = (layout, nodes, media, mode.degraded[degraded_before:])
        return nodes, media


class _Layout:
    """Where a transcript's turns go in its document: its turns with every tool use
    answered (_paired) and HEAD, their ids, depths, the turns no render reads, the file
    order (`ordered`: (file, line, 0 for a turn or 1 for a summary, index)), the summary
    rows by seq, each node's role, the first and last times. A followed file's growth
    usually only adds turns after the last: `grown` then extends the last layout by them
    (the copies of its maps cost little next to building them turn by turn)."""

    source: tuple[Turn, ...]  # the transcript's turns it was laid out from
    source_head: str  # and its HEAD
    compactions: tuple[Compaction, ...]
    unanswered: str
    turns: list[Turn]
    head: str
    ids: dict[str, str]
    depth: dict[str, int]
    unread: set[str]
    ordered: list[tuple[str, int, int, int]]
    # seq -> a compaction's summary row, its `covers` the ids only (_covering)
    summaries: dict[int, dict[str, Any]]
    last_summary: tuple[str, list[str]] | None  # the last one's id and whole segment
    roles: dict[str, str]
    calling: set[str]  # the keys of the turns holding tool uses
    started: datetime
    latest: datetime
    base: _Layout | None  # the layout it extends

    @classmethod
    def of(cls, t: Transcript, tenant: str, sid: str, memo: Memo | None) -> _Layout:
        self = cls()
        self.source, self.source_head, self.compactions, self.unanswered, self.base = \
            t.turns, t.head, t.compactions, t.unanswered, None
        turns, self.head = _paired(t.turns, t.head, t.unanswered, memo)
        named = memo.ids if memo is not None else {}
        ids = {x.key: named.get(x.key) or node_id(tenant, t.tool, t.session_key, x.key)
               for x in (*turns, *t.compactions)}
        ids[ROOT_KEY] = named.get(ROOT_KEY) or node_id(tenant, t.tool, t.session_key, ROOT_KEY)
        if memo is not None:
            memo.ids = ids
        self.turns, self.ids = turns, ids
        parent = {turn.key: turn.parent for turn in turns}
        self.depth = depth = {ROOT_KEY: 0}
        for turn in turns:
            depth[turn.key] = depth[turn.parent] + 1
        self.started = min(turn.at for turn in turns)
        self.latest = max([turn.at for turn in turns] + [c.at for c in t.compactions])
        self.unread = _out_of_context(turns)
        self.calling = {turn.key for turn in t.turns if _uses(turn)}
        # File order, the transcript's own file first, then each sub-agent's.
        self.ordered = sorted([(turn.file or "", turn.line, 0, i) for i, turn in enumerate(turns)]
                              + [("", c.line, 1, i) for i, c in enumerate(t.compactions)])
        self.last_summary, self.summaries = None, {}
        for seq, (_, _, is_summary, index) in enumerate(self.ordered, start=1):
            if is_summary:
                compaction = t.compactions[index]
                row, self.last_summary = _summary(
                    sid, ids, parent, compaction, self.last_summary, seq,
                    is_last=index == len(t.compactions) - 1,
                    meta={"source": {"tool": t.tool, "file": t.file, "line": compaction.line,
                                     "entries": list(compaction.entries)}},
                    file=t.file)
                row["properties"][DIGEST] = mapping_digest(_covering(row))
                self.summaries[seq] = row
        self.roles = {ids[ROOT_KEY]: "system", **{ids[turn.key]: turn.role for turn in turns},
                      **{row["properties"]["id"]: "summary" for row in self.summaries.values()}}
        return self

    @classmethod
    def grown(cls, last: _Layout, t: Transcript, tenant: str, memo: Memo) -> _Layout | None:
        """`last` extended by the turns `t` has after those it was laid out from, when
        nothing else changed: the same compactions, every turn of `last` the same Turn in
        the same place, and the turns added hanging from none that holds tool uses (whose
        pairing they would change) and coming after all of them in file order; else None."""
        old = last.source
        if len(t.turns) <= len(old) or t.compactions != last.compactions \
                or t.unanswered != last.unanswered \
                or not all(map(operator.is_, t.turns, old)):
            return None
        added = t.turns[len(old):]
        if any(turn.parent in last.calling for turn in added):
            return None
        tail, head = _paired(added, t.head, t.unanswered, memo)
        if t.head not in {turn.key for turn in added}:
            if t.head != last.source_head:
                return None
            head = last.head
        at = len(last.turns)
        ordered = sorted((turn.file or "", turn.line, 0, at + i) for i, turn in enumerate(tail))
        if last.ordered and ordered[0] <= last.ordered[-1]:
            return None
        self = cls()
        self.source, self.source_head, self.compactions, self.unanswered, self.base = \
            t.turns, t.head, t.compactions, t.unanswered, last
        last.base = None  # only the layout it extends is needed: no chain of them
        self.turns, self.head = last.turns + tail, head
        self.ids, self.depth = dict(last.ids), dict(last.depth)
        self.unread, self.calling = set(last.unread), set(last.calling)
        self.roles = dict(last.roles)
        for turn in tail:
            self.ids[turn.key] = node_id(tenant, t.tool, t.session_key, turn.key)
            self.depth[turn.key] = self.depth[turn.parent] + 1
            if turn.out_of_context or (turn.role == "tool" and turn.parent in self.unread):
                self.unread.add(turn.key)
            self.roles[self.ids[turn.key]] = turn.role
        self.calling.update(turn.key for turn in added if _uses(turn))
        memo.ids = self.ids
        self.ordered = last.ordered + ordered
        self.summaries, self.last_summary = last.summaries, last.last_summary
        self.started = min(last.started, min(turn.at for turn in tail))
        self.latest = max(last.latest, max(turn.at for turn in tail))
        return self


def _uses(turn: Turn) -> bool:
    return any(b["type"] == "tool_use" for b in turn.blocks)


def plan(transcript: Transcript, tenant: str, limits: Limits,
         source: dict[str, Any] | None = None, mode: Mode | None = None,
         memo: Memo | None = None) -> Plan:
    """`document`'s Plan: all of the document but its node rows."""
    return Plan(transcript, tenant, limits, source,
                mode if mode is not None else Mode(strict=True), memo)


def _tools(named: NamedTools | None, file: str, mode: Mode) -> tuple[str, str] | None:
    """The canonical JSON text and sha256 of the tools `named` that the ledger takes (each
    checked as setTools checks it, the first of a name taken, at most MAX_TOOLS); None when
    it takes none. Each left out is degraded (INVALID_TOOL, at the naming line)."""
    if named is None:
        return None
    taken, names = [], set()
    for raw in named.definitions:
        name = raw.get("name") if isinstance(raw, dict) else None
        what = f"tool {shown(name)}" if isinstance(name, str) else "a tool entry"
        try:
            (tool,) = tool_definitions([raw])
        except BadInput as e:
            reason = (f"{what}: {e.message.removeprefix('tools[0].')}"
                      if e.message.startswith("tools[0].")
                      else e.message.replace("tools[0]", what, 1))
            mode.degrade(file, named.line, DegradedKind.INVALID_TOOL,
                         f"{reason}; left out of the session's tools")
            continue
        if tool.name in names or len(taken) == MAX_TOOLS:
            mode.degrade(file, named.line, DegradedKind.INVALID_TOOL,
                         f"{what}: " + ("named before; the first one is taken"
                                        if tool.name in names else
                                        f"past the {MAX_TOOLS} tools a session offers")
                         + "; left out of the session's tools")
            continue
        names.add(tool.name)
        taken.append(tool)
    text = tools_json(taken)
    return None if text is None else (
        text, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())


def _turn_row(sid: str, ids: dict[str, str], t: Transcript, turn: Turn,
              place: tuple[int, int, bool], limits: Limits, mode: Mode
              ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A turn's node row (its mapping digest in it) and the media its blocks carry."""
    seq, depth, unread = place
    blocks = list(turn.blocks)
    written = _written(turn.role, blocks, limits, turn.file or t.file, turn.line, mode)
    meta = {"source": {"tool": t.tool, "file": turn.file or t.file, "line": turn.line,
                       "entries": list(turn.entries)}, **turn.meta}
    caller = ids[turn.caller] if turn.caller else None
    if caller and turn.parent == ROOT_KEY:
        meta["spawned_from"] = caller  # as spawnTask marks a task's opening node
    row = _node(sid, ids[turn.key], turn.role, written, limits, turn.at, seq, depth, meta,
                ids[turn.parent], caller, turn.side_branch, unread)
    row["properties"][DIGEST] = mapping_digest(row)
    return row, written.params["media"]


def _paired(turns: tuple[Turn, ...], head: str, unanswered: str, memo: Memo | None = None
            ) -> tuple[list[Turn], str]:
    """The turns with every tool use answered: a cancelled result (its text `unanswered`)
    stored where the source has none, so the ledger's tool-pair rule holds on every
    branch. A turn it makes from the same source as the last time `memo` saw is that
    Turn again."""
    made = memo.paired if memo is not None else {}

    def kept(key: str, source: tuple[Any, ...], make: Callable[[], Turn]) -> Turn:
        last = made.get(key)
        if last is not None and len(last[0]) == len(source) and all(
                a is b or (not isinstance(a, Turn) and a == b)
                for a, b in zip(last[0], source)):
            return last[1]
        turn = make()
        made[key] = (source, turn)
        return turn

    children: dict[str, list[Turn]] = {}
    for turn in turns:
        children.setdefault(turn.parent, []).append(turn)
    paired: list[Turn] = []
    moved: dict[str, str] = {}  # a turn re-hung below a synthetic result -> that result
    topped: dict[str, Turn] = {}  # a tool message given the results it lacked
    for turn in turns:
        turn = topped.get(turn.key, turn)
        if turn.key in moved:
            source, parent = turn, moved[turn.key]
            turn = kept("moved:" + turn.key, (source, parent),
                        lambda: replace(source, parent=parent))
        paired.append(turn)
        if turn.role != "assistant":
            continue
        uses = [b["id"] for b in turn.blocks if b["type"] == "tool_use"]
        if not uses:
            continue
        after = children.get(turn.key, [])
        for tool in (c for c in after if c.role == "tool"):
            missing = [u for u in uses if u not in _answered(tool)]
            if missing:
                topped[tool.key] = kept("topped:" + tool.key, (turn, tool, unanswered),
                                        lambda: _topped(tool, missing, unanswered))
        others = [c for c in after if c.role != "tool"]
        if others or not after:
            synthetic = kept(SYNTHETIC_PREFIX + turn.key, (turn, unanswered), lambda: Turn(
                SYNTHETIC_PREFIX + turn.key, turn.key, "tool",
                tuple(cancelled_result(u, unanswered) for u in uses), turn.at, turn.line, (),
                {"synthetic": True, "reason": "the source has no result for these tool uses"},
                turn.caller, turn.side_branch, turn.file))
            paired.append(synthetic)
            moved.update({c.key: synthetic.key for c in others})
            if head == turn.key:
                head = synthetic.key
    return paired, head


def _out_of_context(turns: list[Turn]) -> set[str]:
    """The turns no render reads: the replies the tool kept out of its model's context, and
    the tool messages answering them (a result is never read without its tool use)."""
    unread: set[str] = set()
    for turn in turns:  # parents before children
        if turn.out_of_context or (turn.role == "tool" and turn.parent in unread):
            unread.add(turn.key)
    return unread


def _answered(turn: Turn) -> list[str]:
    return [b["tool_use_id"] for b in turn.blocks if b["type"] == "tool_result"]


def _topped(tool: Turn, missing: list[str], unanswered: str) -> Turn:
    done = len(_answered(tool))
    added = tuple(cancelled_result(u, unanswered) for u in missing)
    return replace(tool, blocks=tool.blocks[:done] + added + tool.blocks[done:],
                   meta={**tool.meta, "synthetic_results": missing})


def _summary(sid: str, ids: dict[str, str], parent: dict[str, str], c: Compaction,
             previous: tuple[str, list[str]] | None, seq: int, *, is_last: bool,
             meta: dict[str, Any], file: str
             ) -> tuple[dict[str, Any], tuple[str, list[str]]]:
    """The compaction's summary row, its `covers` the ids only (_covering), and its id and
    whole segment (the next one's `previous`: only the last is kept, as a long session's
    compactions each cover nearly all of it)."""
    segment = [ids[k] for k in _chain(c.last_covered, parent)]
    below = [ids[k] for k in _chain(c.compacted_head, parent)]
    if not segment or below[:len(segment)] != segment:
        raise bad_line(file, c.line, "the compaction keeps entries that do not follow the "
                       "ones it summarized")
    absorbs = previous is not None and len(previous[1]) < len(segment) \
        and segment[:len(previous[1])] == previous[1]
    new = segment[len(previous[1]):] if absorbs else segment
    text = c.text if c.text.strip() else EMPTY_SUMMARY
    meta = {**meta, **c.meta, **({} if c.text.strip() else {"summary_empty": True})}
    summary_id = ids[c.key]
    properties = {
        "id": summary_id, "session_id": sid, "role": "summary", "content": text,
        "created_at": _stamp(c.at), "tokens": estimate_tokens(text),
        "metadata": json.dumps(meta, ensure_ascii=False, sort_keys=True),
        "seq": seq, "depth": 1, "side_branch": False, "strategy": "rolling",
        "superseded_summary": not is_last, "covers_count": len(segment),
        "covers_new_count": len(new), "covers_first_id": segment[0],
        "covers_last_id": segment[-1], "compacted_head_id": below[-1],
        "retained_ids": below[len(segment):],
    }
    if absorbs:
        properties["absorbed_id"] = previous[0]
    if previous is not None:
        properties["replaced_id"] = previous[0]
    return {"properties": properties, "predecessor_id": ids[ROOT_KEY], "caller_id": None,
            "covers": new, "carries_over": []}, (summary_id, segment)


def _covering(row: dict[str, Any]) -> dict[str, Any]:
    """A summary row as the layout keeps it, with its `covers` as a document's rows name
    them: a dict per node covered only while the row is written."""
    return {**row, "covers": [{"node_id": n, "order": i} for i, n in enumerate(row["covers"])]}


def _chain(key: str, parent: dict[str, str]) -> list[str]:
    """The keys from the first turn after ROOT down to `key`."""
    chain = []
    while key != ROOT_KEY:
        chain.append(key)
        key = parent[key]
    return chain[::-1]


def _root(sid: str, nid: str, t: Transcript, limits: Limits,
          started: datetime) -> dict[str, Any]:
    """ROOT: the system prompt the file records, or an empty system node saying it has none."""
    if t.system is None:
        return _node(sid, nid, "system", _written("system", [], limits), limits, started, 0, 0,
                     {"source": {"tool": t.tool, "file": t.file,
                                 "note": "the tool records no system prompt"}}, None)
    text, line = t.system.text, t.system.line
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_content_bytes:
        raise bad_line(t.file, line, f"the system prompt is {size} bytes; the limit is "
                       f"{limits.max_content_bytes} bytes")
    return _node(sid, nid, "system", block_rules.Written(block_rules.plain(text), text), limits,
                 started, 0, 0, {"source": {"tool": t.tool, "file": t.file, "line": line,
                                            "entries": [f"line{line}"]}}, None)


def _written(role: str, raw: list[dict[str, Any]], limits: Limits, file: str = "",
             line: int = 0, mode: Mode | None = None) -> block_rules.Written:
    if role == "system":
        return block_rules.Written(block_rules.plain(""), "")
    try:
        return block_rules.message_blocks(role, None, raw, limits)
    except BadInput as e:
        if mode is None or mode.strict:
            raise bad_line(file, line, e.message) from None
    mended = [_mended(role, block, limits, file, line, mode) for block in raw]
    try:
        return block_rules.message_blocks(role, None, mended, limits)
    except BadInput as e:
        raise bad_line(file, line, e.message) from None


def _mended(role: str, block: dict[str, Any], limits: Limits, file: str, line: int,
            mode: Mode) -> dict[str, Any]:
    """`block` as the ledger takes it: itself, a tool_result without the parts it refuses,
    or a text block mentioning what was omitted (each degraded)."""
    if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
        return {**block, "content": [_mended_part(block, part, limits, file, line, mode)
                                     for part in block["content"]]}
    reason = _refused(role, [block], limits)
    if reason is None:
        return block
    mode.degrade(file, line, DegradedKind.INVALID_BLOCK, reason)
    return _omitted(block, reason)


def _mended_part(result: dict[str, Any], part: Any, limits: Limits, file: str, line: int,
                 mode: Mode) -> Any:
    reason = _refused("tool", [{**result, "content": [part]}], limits)
    if reason is None:
        return part
    mode.degrade(file, line, DegradedKind.INVALID_BLOCK, reason)
    return _omitted(part, reason)


def _refused(role: str, blocks: list[dict[str, Any]], limits: Limits) -> str | None:
    try:
        block_rules.message_blocks(role, None, blocks, limits)
    except BadInput as e:
        return e.message.replace("blocks[0]", str(blocks[0].get("type", "the block")), 1)
    return None


def _omitted(block: Any, reason: str) -> dict[str, Any]:
    kind = block.get("type") if isinstance(block, dict) else None
    return {"type": "text", "text": OMITTED.format(kind=kind if isinstance(kind, str)
                                                   else "block", reason=reason)}


def _node(sid: str, nid: str, role: str, written: block_rules.Written, limits: Limits,
          at: datetime, seq: int,
          depth: int, meta: dict[str, Any], predecessor: str | None, caller: str | None = None,
          side_branch: bool = False, out_of_context: bool = False) -> dict[str, Any]:
    params = written.params
    if params["blocks"] is not None:
        records.made_blocks(params["blocks"], role, limits, written.parsed)
    properties = {"id": nid, "session_id": sid, "role": role, "content": params["content"],
                  "created_at": _stamp(at), "tokens": params["tokens"],
                  "metadata": records.made_json_object(meta, limits, "metadata"),
                  "seq": seq, "depth": depth, "side_branch": side_branch}
    if params["blocks"] is not None:
        properties["blocks"] = params["blocks"]
    if params["thinking"] is not None:
        properties["thinking"] = params["thinking"]
    if params["tool_uses"]:
        properties["tool_use_ids"] = [u["id"] for u in params["tool_uses"]]
    if params["answers"]:
        properties["answered_ids"] = params["answers"]
    if out_of_context:
        properties["out_of_context"] = True
    return {"properties": properties, "predecessor_id": predecessor, "caller_id": caller,
            "covers": [], "carries_over": []}


def _stamp(at: datetime) -> dict[str, str]:
    return {"datetime": at.isoformat()}
