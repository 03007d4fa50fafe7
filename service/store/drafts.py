"""Turn drafts: a turn between its two steps (beginTurn, completeTurn), for a runtime that
calls its own model (docs/guides/agent-runtimes.md, "Bring your own model").

A draft records what its request holds — the node ids it reads in prompt order, the tools
it offers — and the tip its reply follows, until it expires. It holds no relationship
into the conversation (its reads and tip are ids), only ATTEMPT edges to the calls
recorded for it, each naming the client key it was completed with; so a draft forgotten
leaves the ledger as it was. The reply itself is written by HeadMoves.complete_draft
(head.py: it may move HEAD); a failed attempt, which writes no node, here.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

from ..errors import BadInput, NotFound
from ..model import validate
from ..model.ids import utcnow
from ..model.kinds import native
from ..model.models import Call, CallRecord, Node, Purpose, node_from_row, validate_call
from .db import Database, RowCheck, Rows
from .problems import raise_for_problem
from ..model.validate import Limits

MAX_CLIENT_KEY_LENGTH = 200


@dataclass(frozen=True)
class DraftRecord:
    """What a draft stores: its request's reads (prompt order; the last `recalled_reads` are
    turns its recall results quote), the tools it offers, and the tip its reply follows."""

    id: str
    session_id: str
    purpose: Purpose
    head_id: str  # the tip: the request's last message; the reply is written after it
    opened_id: str | None  # the node beginTurn wrote (message or results), if it wrote one
    read_ids: tuple[str, ...]
    read_element_ids: tuple[str | None, ...]
    recalled_reads: int
    tools_json: str | None
    tool_choice_json: str | None
    recall: bool
    ttl_seconds: int
    created_at: datetime
    expires_at: datetime

    def as_param(self) -> dict[str, Any]:
        """The draft's properties (a list property holds no null: '' for an unknown
        element id; absent optional values are left out)."""
        stored = {
            "id": self.id, "purpose": self.purpose.value, "head_id": self.head_id,
            "opened_id": self.opened_id, "read_ids": list(self.read_ids),
            "read_element_ids": [e or "" for e in self.read_element_ids],
            "recalled_reads": self.recalled_reads, "tools": self.tools_json,
            "tool_choice": self.tool_choice_json, "recall": self.recall,
            "ttl_seconds": self.ttl_seconds, "expires_at": self.expires_at,
        }
        return {k: v for k, v in stored.items() if v is not None}


def draft_from_row(row: Mapping[str, Any]) -> DraftRecord:
    return DraftRecord(
        id=row["id"], session_id=row["session_id"], purpose=Purpose(row["purpose"]),
        head_id=row["head_id"], opened_id=row.get("opened_id"),
        read_ids=tuple(row["read_ids"]),
        read_element_ids=tuple(e or None for e in row["read_element_ids"]),
        recalled_reads=row.get("recalled_reads") or 0, tools_json=row.get("tools"),
        tool_choice_json=row.get("tool_choice"), recall=bool(row.get("recall")),
        ttl_seconds=row["ttl_seconds"], created_at=native(row["created_at"]),
        expires_at=native(row["expires_at"]))


@dataclass(frozen=True)
class Attempt:
    """A call recorded for a draft under a client key: its reply, or none (it failed)."""

    call_id: str
    reply: Node | None


@dataclass(frozen=True)
class StoredDraft:
    record: DraftRecord
    opened: Node | None  # the node beginTurn wrote
    attempt: Attempt | None  # the attempt recorded under the key asked about
    completed_by: str | None = None  # the client key of the attempt that produced its reply
    completed_call_id: str | None = None
    last_finished_at: datetime | None = None  # when its latest attempt (a failed one) ended


def _unknown(draft_id: str) -> NotFound:
    return NotFound("draft", draft_id, f"draft {draft_id!r} is unknown: never begun, or "
                                       "expired and forgotten; begin the turn again")


def missing_draft(draft_id: str, key: str) -> RowCheck:
    """The row check of a completion: no row means the draft is gone."""
    def check(rows: Rows) -> None:
        if not rows:
            raise _unknown(draft_id)
        raise_for_problem(rows[0].get("problem"),
                          {**rows[0], "draft_id": draft_id, "client_key": key})
    return check


def client_key(value: object) -> str:
    """A completion's idempotency key: 1–200 characters, not blank."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_CLIENT_KEY_LENGTH:
        raise BadInput(f"clientKey must be 1 to {MAX_CLIENT_KEY_LENGTH} characters of "
                                f"text, not blank; got {validate.shown(value)}")
    return value


class Drafts:
    def __init__(self, db: Database, tenant: str, limits: Limits) -> None:
        self._db, self._tenant, self._limits = db, tenant, limits

    async def open(self, record: DraftRecord) -> DraftRecord:
        """Stores a draft (one statement); the session's expired drafts are forgotten."""
        validate.identifier(record.session_id, "session id")
        rows = await self._db.write("draft_open", session_id=record.session_id,
                                    tenant=self._tenant, draft=record.as_param(),
                                    now=record.created_at)
        if not rows:
            raise NotFound("session", record.session_id)
        return draft_from_row(rows[0]["draft"])

    async def get(self, draft_id: str, key: str) -> StoredDraft:
        """The draft, with what its attempt under `key` stored (on the leader: it decides a
        write, and must see a completion that just committed)."""
        validate.identifier(draft_id, "draft id")
        client_key(key)
        rows = await self._db.read_on_leader("draft_get", draft_id=draft_id,
                                             tenant=self._tenant, client_key=key)
        if not rows:
            raise _unknown(draft_id)
        row = rows[0]
        attempt = row["attempt"]
        completion = row["completion"] or {}
        return StoredDraft(
            draft_from_row(row["draft"]),
            None if row["opened"] is None else node_from_row(row["opened"]),
            None if attempt is None else Attempt(
                attempt["call_id"],
                None if attempt["node"] is None else node_from_row(attempt["node"])),
            completion.get("client_key"), completion.get("call_id"),
            None if row["last_finished_at"] is None else native(row["last_finished_at"]))

    async def fail(self, draft_id: str, key: str, record: CallRecord,
                   keep_until: datetime) -> Call:
        """A failed attempt: the call alone, linked to the draft under `key` (one statement);
        Stale when an attempt with `key` committed first."""
        validate_call(record, self._limits)
        rows = await self._db.write("draft_failure", missing_draft(draft_id, key), tenant=self._tenant,
                                    call=record.as_param(), now=utcnow(), draft_id=draft_id,
                                    client_key=key, keep_until=keep_until)
        row = rows[0]
        return Call(**row["accounting"], id=record.id, session_id=row["session_id"],
                    purpose=record.purpose, provider=record.provider, model=record.model,
                    head_id=record.head_id, read_ids=record.read_ids,
                    read_count=len(record.read_ids), output_id=None,
                    started_at=record.started_at, finished_at=record.finished_at,
                    input_tokens=record.input_tokens, output_tokens=record.output_tokens,
                    error_code=record.error_code, error_message=record.error_message,
                    tools_sha256=record.tools_sha256,
                    cache_creation_input_tokens=record.cache_creation_input_tokens,
                    cache_read_input_tokens=record.cache_read_input_tokens,
                    recalled_reads=record.recalled_reads)
