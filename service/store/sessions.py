"""Sessions: create (with ROOT), get, list in pages, title and the user's extra_meta."""
from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from ..errors import Conflict
from ..tokens import estimate_tokens
from ..model import listing, validate
from .batch import by_ids, the_one
from .db import Database
from .events import Events
from ..model.ids import new_id, utcnow
from ..model.models import Session, SummaryStrategy, session_from_row
from .paging import Page, page_of, window
from .problems import Stale, single_row
from ..model.validate import Limits

_META_RETRIES = 5


class Sessions:
    def __init__(self, db: Database, tenant: str, limits: Limits, events: Events) -> None:
        self._db, self._tenant, self._limits, self._events = db, tenant, limits, events

    async def create(self, title: str | None = None, system_prompt: str = "",
                     extra_meta: Mapping[str, Any] | None = None,
                     summary_strategy: str | None = None, recall: bool = False,
                     project: str | None = None) -> Session:
        """`summary_strategy`: which summaries its renders consider (default rolling);
        `recall`: its turns offer the model the recall tools (docs/guides/recall.md);
        `project`: the working directory it belongs to, for the session list."""
        title = validate.title(title)
        project = None if project is None else validate.path(project, "project")
        strategy = _strategy(summary_strategy) or SummaryStrategy.ROLLING.value
        system_prompt = validate.content(system_prompt, self._limits, "system prompt",
                                         allow_empty=True)
        meta = validate.extra_meta(extra_meta, self._limits)
        validate.flag(recall, "recall")
        rows = await self._db.write(
            "session_create", session_id=new_id("ses"), tenant=self._tenant, title=title,
            extra_meta=meta, now=utcnow(), root_id=new_id("nod"), system_prompt=system_prompt,
            root_tokens=estimate_tokens(system_prompt), summary_strategy=strategy, recall=recall,
            project=project,
        )
        return session_from_row(rows[0]["session"])

    async def get(self, session_id: str) -> Session:
        return the_one(await self.get_many([session_id]), "session", session_id)

    async def get_many(self, session_ids: Sequence[str]) -> list[Session]:
        """The sessions that exist for this tenant, in the order asked."""
        return await by_ids(self._db, "session_get_many", session_ids, param="session_ids",
                            what="session", build=lambda r: session_from_row(r["session"]),
                            key=lambda s: s.id, tenant=self._tenant,
                            torn=lambda rows: any(r["session"]["head_id"] is None
                                                  for r in rows))

    async def list(self, first: int | None = None, after: str | None = None,
                   last: int | None = None, before: str | None = None, *,
                   keep: listing.Filter = listing.Filter(),
                   order: str = "created") -> Page[Session]:
        """A page of the tenant's sessions that `keep` keeps, newest first by `order`
        (creation or last activity; Relay's first/after/last/before)."""
        order = listing.order(order)
        kept = keep.params()
        win = window(first, after, last, before)
        rows = await self._db.read("session_list", tenant=self._tenant, order=order, **kept,
                                   **win.params())
        key = (lambda s: (s.last_activity_at, s.id)) if order == "last_activity" else \
            (lambda s: (s.created_at, s.id))
        return page_of([session_from_row(r["session"]) for r in rows], win, key)

    async def count(self, keep: listing.Filter = listing.Filter()) -> int:
        rows = await self._db.read("session_count", tenant=self._tenant, **keep.params())
        return rows[0]["total"]

    async def update(self, session_id: str, *, title: str | None = None, set_title: bool = False,
                     extra_meta: Mapping[str, Any] | None = None,
                     summary_strategy: str | None = None,
                     recall: bool | None = None) -> Session:
        """Sets the title, merges `extra_meta` (a key set to None is removed), sets the
        summary strategy and/or the recall setting, in one write.

        Keys starting with '_' belong to ctxdag (the active summary lives there)
        and are refused. A metadata save never touches HEAD. A strategy change is
        announced (`summary_strategy_changed`); it changes what heads render, never
        what is stored.
        """
        title = validate.title(title) if set_title else None
        strategy = _strategy(summary_strategy)
        if recall is not None:
            validate.flag(recall, "recall")
        if extra_meta is not None:
            validate.extra_meta(extra_meta, self._limits)
        for _ in range(_META_RETRIES):
            current = the_one(await self._db.read(
                "session_meta_get", session_id=session_id, tenant=self._tenant), "session", session_id)
            merged = None
            if extra_meta is not None:
                updated = {**json.loads(current["extra_meta"]), **extra_meta}
                merged = validate.json_object(
                    {k: v for k, v in updated.items() if v is not None}, self._limits, "extra_meta")
            try:
                rows = await self._db.write(
                    "session_update", single_row(session_id, {"session_id": session_id}),
                    session_id=session_id, tenant=self._tenant, title=title,
                    set_title=set_title, extra_meta=merged,
                    expected_meta_version=current["meta_version"],
                    expected_extra_meta=current["extra_meta"], summary_strategy=strategy,
                    recall=recall, now=utcnow(),
                )
            except Stale:  # another save landed between our read and our write
                continue
            await self._events.committed(session_id, rows[0]["events"])
            return session_from_row(rows[0]["session"])
        raise Conflict(f"session {session_id} metadata kept changing; try again")


def _strategy(value: str | None) -> str | None:
    return None if value is None else validate.summary_strategy(value)
