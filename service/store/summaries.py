"""Summary nodes: compaction's one write, and reading a summary with its coverage."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..errors import BadInput
from ..tokens import estimate_tokens
from . import validate
from .batch import by_ids, the_one
from .db import Database
from .ids import new_id, utcnow
from .models import CallRecord, Summary, summary_from_row
from .problems import single_row
from .validate import Limits

ROLLING = "rolling"


class Summaries:
    def __init__(self, db: Database, tenant: str, limits: Limits) -> None:
        self._db, self._tenant, self._limits = db, tenant, limits

    async def persist(
        self,
        session_id: str,
        new_ids: Sequence[str],
        content: str,
        *,
        absorbed_id: str | None,
        expected_active_id: str | None,
        metadata: Mapping[str, Any] | None = None,
        call: CallRecord | None = None,
        instructions: str | None = None,
    ) -> Summary:
        """Writes the summary node and makes it the session's active summary.

        `new_ids`: the turns newly covered, in chain order, real turns only. When
        the rendered view carried a summary (`absorbed_id`), the new coverage is its
        segment extended by `new_ids`. `expected_active_id` is the active summary the
        caller saw: if another compaction moved it meanwhile, nothing is written
        and a Conflict is raised. `call` is the summarizer's model call, recorded
        in the same transaction. `instructions` are the focus instructions the
        summarizer was given, stored on the node (absent when None). Returns the
        summary, with the ids it covers.
        """
        validate.identifier(session_id, "session id")
        if not new_ids:
            raise BadInput("a summary must cover at least one turn")
        for node_id in new_ids:
            validate.identifier(node_id, "covered id")
        content = validate.content(content, self._limits, "summary")
        validate.optional_identifier(absorbed_id, "absorbed summary id")
        validate.optional_identifier(expected_active_id, "expected active summary id")
        metadata_json = validate.json_object(metadata, self._limits, "metadata")
        instructions = validate.instructions(instructions)
        if call is not None:
            validate.call_record(call, self._limits)
        ids = {"session_id": session_id, "absorbed_id": absorbed_id}
        rows = await self._db.write(
            "summary_persist", single_row(session_id, ids), session_id=session_id,
            tenant=self._tenant, summary_id=new_id("nod"), content=content,
            tokens=estimate_tokens(content),
            metadata=metadata_json,
            now=utcnow(), new_ids=list(new_ids), absorbed_id=absorbed_id,
            expected_active_id=expected_active_id, strategy=ROLLING,
            instructions=instructions,
            call=None if call is None else call.as_param(),
        )
        row = rows[0]
        return summary_from_row(row["summary"], row["covers_ids"])

    async def get(self, summary_id: str) -> Summary:
        return the_one(await self.get_many([summary_id]), "summary", summary_id)

    async def get_many(self, summary_ids: Sequence[str]) -> list[Summary]:
        return await by_ids(self._db, "summary_get_many", summary_ids, param="summary_ids",
                            what="summary", key=lambda s: s.id, tenant=self._tenant,
                            build=lambda r: summary_from_row(r["summary"], r["covers_ids"]))
