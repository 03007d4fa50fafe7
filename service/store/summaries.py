"""Summary nodes: compaction's one write, undoing it, and reading a summary with its coverage."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import BadInput, NotFound
from ..tokens import estimate_tokens
from ..model import validate
from .batch import by_ids, grouped, the_one
from .db import Database
from .events import Events
from ..model.ids import new_id, utcnow
from ..model.models import CallRecord, Summary, SummaryStrategy, summary_from_row, validate_call
from .problems import raise_for_problem, single_row
from ..model.validate import Limits


@dataclass(frozen=True)
class Retirement:
    session_id: str
    summary_id: str
    restored_id: str | None  # the session's active summary now


class Summaries:
    def __init__(self, db: Database, tenant: str, limits: Limits, events: Events) -> None:
        self._db, self._tenant, self._limits, self._events = db, tenant, limits, events

    async def persist(
        self,
        session_id: str,
        new_ids: Sequence[str],
        content: str,
        *,
        absorbed_id: str | None,
        compacted_head_id: str,
        retained_ids: Sequence[str],
        expected_version: int,
        strategy: str = SummaryStrategy.ROLLING.value,
        metadata: Mapping[str, Any] | None = None,
        call: CallRecord | None = None,
        instructions: str | None = None,
        announce: Mapping[str, Any] | None = None,
        nested_ids: Sequence[str] = (),
    ) -> Summary:
        """Writes the summary node and makes it the session's active summary.

        `new_ids`: the turns newly covered, in chain order, real turns only. When
        the rendered view carried a summary (`absorbed_id`), the new coverage is its
        segment extended by `new_ids`. `compacted_head_id` is the head whose render
        was compacted and `retained_ids` its chain below the new segment (both decide
        where the summary applies under the branch strategy). `expected_version` is
        the session's summary version the render saw: if a compaction, an uncompact
        or a strategy change landed meanwhile, nothing is written and a Conflict is
        raised. `call` is the summarizer's model call, recorded in the same
        transaction. `instructions` are the focus instructions the summarizer was
        given, stored on the node (absent when None). `announce`: the compaction_finished
        event's trigger and token counts, stored with the summary (None: no event).
        `nested_ids`: for a nested summary (segmented), the summaries it merges, chain order;
        `new_ids` is then the union of their segments (docs/segmented.md, "Nesting").
        Returns the summary, with the ids it covers.
        """
        validate.identifier(session_id, "session id")
        if not new_ids:
            raise BadInput("a summary must cover at least one turn")
        for node_id in new_ids:
            validate.identifier(node_id, "covered id")
        content = validate.content(content, self._limits, "summary")
        validate.optional_identifier(absorbed_id, "absorbed summary id")
        validate.identifier(compacted_head_id, "compacted head id")
        for node_id in retained_ids:
            validate.identifier(node_id, "retained id")
        for node_id in nested_ids:
            validate.identifier(node_id, "nested summary id")
        strategy = validate.summary_strategy(strategy)
        metadata_json = validate.json_object(metadata, self._limits, "metadata")
        instructions = validate.instructions(instructions)
        if call is not None:
            validate_call(call, self._limits)
        ids = {"session_id": session_id, "absorbed_id": absorbed_id}
        rows = await self._db.write(
            "summary_persist", single_row(session_id, ids), session_id=session_id,
            tenant=self._tenant, summary_id=new_id("nod"), content=content,
            tokens=estimate_tokens(content),
            metadata=metadata_json,
            now=utcnow(), new_ids=list(new_ids), absorbed_id=absorbed_id,
            expected_version=expected_version, strategy=strategy,
            compacted_head_id=compacted_head_id, retained_ids=list(retained_ids),
            instructions=instructions, nested_ids=list(nested_ids),
            call=None if call is None else call.as_param(),
            announce=None if announce is None else dict(announce),
        )
        row = rows[0]
        await self._events.committed(session_id, row["events"])
        return summary_from_row(row["summary"], row["covers_ids"])

    async def retire(self, summary_id: str) -> Retirement:
        """Undoes a compaction: the summary stops applying (it stays, a relic, for
        provenance) and what applied before applies again. When it was the session's
        active summary, the one it replaced becomes active again. Never moves HEAD."""
        validate.identifier(summary_id, "summary id")
        def check(rows) -> None:
            if not rows:
                raise NotFound("summary", summary_id)
            raise_for_problem(rows[0]["problem"], {"summary_id": summary_id,
                                                   "nested_in": rows[0]["nested_in"]})

        rows = await self._db.write("summary_retire", check, summary_id=summary_id,
                                    tenant=self._tenant, now=utcnow())
        row = rows[0]
        await self._events.committed(row["session_id"], row["events"])
        return Retirement(row["session_id"], summary_id, row["restored_id"])

    async def get(self, summary_id: str) -> Summary:
        return the_one(await self.get_many([summary_id]), "summary", summary_id)

    async def covering_many(self, node_ids: Sequence[str]) -> dict[str, list[str]]:
        """The ids of the summaries whose segments contain each node, newest first."""
        return await grouped(self._db, "summaries_covering_many", node_ids, param="node_ids",
                             what="node", group="node_id", build=lambda r: r["summary_id"],
                             tenant=self._tenant)

    async def get_many(self, summary_ids: Sequence[str]) -> list[Summary]:
        return await by_ids(self._db, "summary_get_many", summary_ids, param="summary_ids",
                            what="summary", key=lambda s: s.id, tenant=self._tenant,
                            build=lambda r: summary_from_row(r["summary"], r["covers_ids"]))
