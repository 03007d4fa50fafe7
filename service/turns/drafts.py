"""A turn between its two steps: the request it sends, and where its reply goes.

Every turn is two steps (docs/guides/agent-runtimes.md, "Bring your own model"): begin —
the opening node written, the prompt rendered (compacted first when it reaches the
budget) — and complete — the reply written with the call that produced it, or the failed
call alone. Between them stands a `Draft`. The service's own turns hold theirs for the
length of their model call; a runtime that calls its own model gets its draft from
beginTurn, stored until it expires (store/drafts.py), and completes it with completeTurn.
Both are completed by the same code (service.py: `_complete`, `_fail`).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Mapping

from ..context.compaction import CompactionResult
from ..model.ids import new_id, utcnow
from ..model.models import CallRecord, Node, PromptReads, Purpose, Rendered, tools_json
from ..store.drafts import DraftRecord
from .providers import Prompt
from .requests import Options


@dataclass(frozen=True)
class Draft:
    id: str
    session_id: str
    purpose: Purpose
    head_id: str  # the tip: the request's last message; the reply follows it
    reads: PromptReads  # what the call reads, prompt order: its READ edges
    tools_json: str | None  # the tools the request offers (part of what it read)
    created_at: datetime
    opened: Node | None = None  # the node the turn's first step wrote, if it wrote one
    view: Rendered | None = None  # the render (None for a stored draft read back)
    media: Mapping[str, str] = field(default_factory=dict)
    options: Options = field(default_factory=Options)
    compaction: CompactionResult | None = None  # the auto compaction its first step ran
    retry_of: str | None = None  # a retry's reply: the new one is its sibling
    stored: DraftRecord | None = None  # a runtime's draft, completed by completeTurn

    @classmethod
    def of(cls, session_id: str, purpose: Purpose, view: Rendered,
           media: Mapping[str, str], options: Options, **fields: Any) -> "Draft":
        return cls(new_id("drf"), session_id, purpose, view.head_id, PromptReads.of(view.nodes),
                   tools_json(options.tools), utcnow(), view=view, media=media,
                   options=options, **fields)

    @classmethod
    def of_record(cls, record: DraftRecord, opened: Node | None) -> "Draft":
        return cls(record.id, record.session_id, record.purpose, record.head_id,
                   PromptReads(record.read_ids, record.read_element_ids,
                               record.recalled_reads),
                   record.tools_json, record.created_at, opened=opened,
                   options=Options(recall=record.recall), stored=record)

    @property
    def prompt(self) -> Prompt:
        assert self.view is not None, "a draft read back from the store holds no render"
        return Prompt(self.view.nodes, self.media, self.options)

    @property
    def tools_sha256(self) -> str | None:
        """The tools' content hash, as the call records it (None: no tools)."""
        if self.tools_json is None:
            return None
        return hashlib.sha256(self.tools_json.encode("utf-8")).hexdigest()

    @property
    def fingerprint(self) -> str:
        """What the request holds, as one hash: its reads in order, its tools and tool
        choice. Two drafts with one fingerprint send the same prompt."""
        return _fingerprint(self.reads.ids, self.tools_json, _choice_json(self.options))

    def call(self, provider: str, model: str | None, started_at: datetime,
             finished_at: datetime, **fields: Any) -> CallRecord:
        """The call that answers (or failed to answer) this draft's request."""
        return CallRecord(self.purpose, provider, model, self.reads.ids, started_at,
                          finished_at, head_id=self.head_id,
                          read_element_ids=self.reads.element_ids,
                          recalled_reads=self.reads.recalled, tools_json=self.tools_json,
                          **fields)

    def record(self, ttl_seconds: int) -> DraftRecord:
        """The draft as beginTurn stores it, expiring `ttl_seconds` from now."""
        now = utcnow()
        return DraftRecord(
            self.id, self.session_id, self.purpose, self.head_id,
            None if self.opened is None else self.opened.id, self.reads.ids,
            self.reads.element_ids, self.reads.recalled, self.tools_json,
            _choice_json(self.options), bool(self.options.recall), ttl_seconds, now,
            now + timedelta(seconds=ttl_seconds))


def _choice_json(options: Options) -> str | None:
    choice = options.tool_choice
    if choice is None:
        return None
    return json.dumps({"mode": choice.mode, "name": choice.name}, sort_keys=True)


def _fingerprint(read_ids: tuple[str, ...], tools: str | None, choice: str | None) -> str:
    text = json.dumps([list(read_ids), tools, choice], separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
