"""A session's backup restored (`ctxdag import`): at once (backup.import_session), or, when
it holds IN_PARTS_FROM nodes or more, in parts, each in a transaction of its own, as a
large transcript's first import is (transcript_parts.py). One transaction holding every
node of a session of a hundred thousand turns needs more memory than Neo4j lets a
transaction use on its default heap.

The document is checked whole first, by every rule of the import at once, so a document
refused writes nothing. The import then claims the session (pending_imports.py), writes
its nodes a part at a time in seq order (transcript_import_part: the session's id and each
part's ids checked free, each medium carried by the first part naming it) and creates the
session with its calls, labels, branch names, pins and tool sets
(transcript_import_session), which checks what all the parts wrote as backup_import checks
a session imported at once: the same session. A part or the last statement that fails
clears what the import wrote before the error is raised; what a kill leaves is cleared by
the session's next import or by clear_abandoned. Until the last statement commits, the
nodes belong to no session.
"""
from __future__ import annotations

import asyncio
from typing import Any

from ..errors import BadInput
from ..model import validate
from ..model.validate import Limits
from .backup import Checked, check, import_check, import_session, placed
from .db import Database, RowCheck, Rows
from .pending_imports import import_claimed
from .problems import raise_for_problem

# A document of this many nodes or more is restored in parts.
IN_PARTS_FROM = 10_000
# Nodes a part (a transcript's import in parts writes as many).
PART_NODES = 1_000


async def restore(db: Database, tenant: str, document: Any, limits: Limits) -> str:
    """Rebuilds an exported session in `tenant`, as import_session does (its errors, nothing
    left written), in parts when it is long; returns its id."""
    parsed = await asyncio.to_thread(check, document, limits)
    if len(parsed.params["nodes"]) < IN_PARTS_FROM:
        return await import_session(db, tenant, document, limits, parsed)
    session_id = parsed.params["session"]["properties"]["id"]
    parts = await asyncio.to_thread(_parts, parsed)
    async with import_claimed(db, tenant, session_id) as token:
        for part in parts:
            await db.write("transcript_import_part", _part_check(session_id, parsed),
                           tenant=tenant, session_id=session_id, token=token, **part)
        params = parsed.params
        await db.write("transcript_import_session", import_check(session_id, parsed),
                       tenant=tenant, token=token, session=params["session"],
                       calls=params["calls"], tool_sets=params["tool_sets"],
                       tool_set_versions=params["tool_set_versions"],
                       labels=params["labels"], branch_names=params["branch_names"],
                       pins=params["pins"])
    return session_id


def _parts(parsed: Checked) -> list[dict[str, Any]]:
    """transcript_import_part's parameters for each part of the document's nodes; BadInput
    when a node names one that comes after it in seq order (a session grows forward: each
    node is written after those it names)."""
    nodes = sorted(parsed.params["nodes"], key=lambda row: (row["properties"]["seq"],
                                                            row["properties"]["id"]))
    place = {row["properties"]["id"]: i for i, row in enumerate(nodes)}
    carried = {medium["sha256"]: medium for medium in parsed.params["media"]}
    written: set[str] = set()  # media a part carries already
    parts = []
    for start in range(0, len(nodes), PART_NODES):
        # Each node a part's rows name is placed again: in the part, or among the nodes of
        # the parts before it, stored by then.
        rows, referred = placed(nodes[start:start + PART_NODES])
        later = [node_id for node_id in referred if place[node_id] >= start]
        if later:
            raise BadInput(f"node {validate.shown(later[0])} is named by a node that comes "
                           "before it in seq order; a session's nodes name only earlier ones")
        named = {digest for row in rows for digest in row["media_refs"]}
        first_named = sorted((named & carried.keys()) - written)
        written.update(first_named)
        parts.append({"nodes": rows, "referred": referred,
                      "media": [carried[digest] for digest in first_named],
                      "media_stored": sorted(named - set(first_named))})
    return parts


def _part_check(session_id: str, parsed: Checked) -> RowCheck:
    def check_rows(rows: Rows) -> None:
        raise_for_problem(rows[0]["problem"], {**rows[0], "session_id": session_id,
                                               "media_named_by": parsed.named_not_carried})
    return check_rows
