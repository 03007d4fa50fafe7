"""Who moves HEAD: this module, and nothing else.

HEAD changes only through these user-facing moves:

- `append_message` advances HEAD when the new node's predecessor *is* HEAD (the
  conversation grew), decided atomically with the write; any other insert
  (a side branch, a write under an older node) leaves HEAD where it was;
- `set_head` (checkout) and `rewind` move it to an existing node;
- `retry` / `edit` fork a sibling and move HEAD onto it;
- `delete_branch` moves it to the fork point when it sat on the deleted part.

Compaction, loading, restarts and metadata saves never call any of these.
"""
from __future__ import annotations

from typing import Any, Mapping

from ..errors import NotFound
from ..tokens import estimate_tokens
from . import validate
from .db import Database, Rows
from .ids import new_id, utcnow
from .models import Appended, DeletedBranch, HeadMove, Node, Role, node_from_row
from .problems import raise_for_problem, single_row
from .validate import Limits


class HeadMoves:
    def __init__(self, db: Database, tenant: str, limits: Limits) -> None:
        self._db, self._tenant, self._limits = db, tenant, limits

    async def append_message(
        self,
        session_id: str,
        role: Role | str,
        content: str,
        *,
        predecessor_id: str | None = None,
        caller_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        side_branch: bool = False,
        advance_head: bool = True,
    ) -> Appended:
        """Appends after `predecessor_id` (default: HEAD). One statement, one transaction.

        HEAD moves onto the new node only when its predecessor is HEAD and
        `advance_head` holds (a spawned sub-agent turn writes with it off).
        `side_branch` marks a spawned branch (and, by inheritance, everything under
        it): such nodes never count as user branches.
        """
        ids = {
            "session_id": validate.identifier(session_id, "session id"),
            "predecessor_id": validate.optional_identifier(predecessor_id, "predecessor id"),
            "caller_id": validate.optional_identifier(caller_id, "caller id"),
        }
        role = validate.appendable_role(role)
        content = validate.content(content, self._limits)
        meta = validate.json_object(metadata, self._limits, "metadata")
        rows = await self._db.write(
            "append_message", single_row(session_id, ids), tenant=self._tenant,
            node_id=new_id("nod"), role=role.value, content=content,
            tokens=estimate_tokens(content), metadata=meta, now=utcnow(),
            side_branch=side_branch, advance_head=advance_head, **ids,
        )
        return Appended(node_from_row(rows[0]["node"]), bool(rows[0]["head_moved"]))

    async def set_head(self, session_id: str, node_id: str) -> HeadMove:
        """Checkout: HEAD to any live, non-summary node of the session."""
        return await self._move(session_id, node_id, require_ancestor=False)

    async def rewind(self, session_id: str, node_id: str) -> HeadMove:
        """HEAD back to an ancestor of HEAD (or HEAD itself); nothing is deleted."""
        return await self._move(session_id, node_id, require_ancestor=True)

    async def retry(self, node_id: str, content: str,
                    metadata: Mapping[str, Any] | None = None) -> Node:
        """A new sibling of assistant reply `node_id`; HEAD moves onto it."""
        return await self._fork(node_id, Role.ASSISTANT, content, metadata)

    async def edit(self, node_id: str, content: str,
                   metadata: Mapping[str, Any] | None = None) -> Node:
        """A new sibling of user message `node_id` with new content; HEAD moves onto it."""
        return await self._fork(node_id, Role.USER, content, metadata)

    async def delete_branch(self, session_id: str, tip_id: str) -> DeletedBranch:
        ids = {"session_id": validate.identifier(session_id, "session id"),
               "tip_id": validate.identifier(tip_id, "tip id")}
        rows = await self._db.write("delete_branch", single_row(session_id, ids),
                                    tenant=self._tenant, now=utcnow(), **ids)
        row = rows[0]
        return DeletedBranch(
            session_id=session_id, tip_id=tip_id, fork_point_id=row["fork_point_id"],
            deleted_ids=tuple(row["deleted_ids"]),
            head=HeadMove(session_id, row["previous_head_id"], row["head_id"]),
        )

    async def _move(self, session_id: str, node_id: str, require_ancestor: bool) -> HeadMove:
        ids = {"session_id": validate.identifier(session_id, "session id"),
               "node_id": validate.identifier(node_id, "node id")}
        rows = await self._db.write("set_head", single_row(session_id, ids), tenant=self._tenant,
                                    require_ancestor=require_ancestor, now=utcnow(), **ids)
        return HeadMove(session_id, rows[0]["previous_head_id"], rows[0]["head_id"])

    async def _fork(self, node_id: str, role: Role, content: str,
                    metadata: Mapping[str, Any] | None) -> Node:
        validate.identifier(node_id, "node id")
        content = validate.content(content, self._limits)
        meta = validate.json_object(metadata, self._limits, "metadata")

        def check(rows: Rows) -> None:
            if not rows:
                raise NotFound("node", node_id)
            raise_for_problem(rows[0]["problem"], {"node_id": node_id})

        rows = await self._db.write(
            "fork_sibling", check, node_id=node_id, tenant=self._tenant, new_id=new_id("nod"),
            expected_role=role.value, content=content, tokens=estimate_tokens(content),
            metadata=meta, now=utcnow(),
        )
        return node_from_row(rows[0]["node"])
