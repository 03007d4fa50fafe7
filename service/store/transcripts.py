"""Storing an imported transcript: the whole session the first time, then only what the
file gained.

A transcript's document (service/transcripts/document.py) names its session and nodes by
ids derived from the source. When the tenant holds no session of that id, the document is
imported as a backup is (backup.import_session: one transaction, validated, invariants
checked). When it does, the nodes it holds already are left as they are and the others
are added after them by one statement (cypher/transcript_extend.cypher), numbered after
the stored ones, HEAD moved to the transcript's head and its newest compaction made the
active summary; that statement checks the session's invariants too, so a grown file
writes all it gained or nothing. The same file again writes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..errors import BadInput
from .backup import checked_nodes, import_session
from .db import Database, Rows
from .events import Events
from .ids import utcnow
from .problems import raise_for_problem
from .validate import Limits


@dataclass(frozen=True)
class Stored:
    session_id: str
    created: bool  # the session is new
    written: int  # nodes written (0: the file gained nothing since it was imported)
    nodes: int  # nodes the transcript maps to


async def store_transcript(db: Database, tenant: str, document: dict[str, Any],
                           limits: Limits, events: Events) -> Stored:
    """Imports or extends; an extension announces its nodes (and HEAD's move) as events, so
    a viewer subscribed to the session sees them. (A new session announces none: nobody
    can be subscribed to a session before it exists.)"""
    session = document["session"]
    session_id = session["properties"]["id"]
    rows = checked_nodes(document, limits)
    ids = [row["properties"]["id"] for row in rows]
    found = await db.read_on_leader("transcript_stored", session_id=session_id, tenant=tenant,
                          node_ids=ids)
    if not found:
        await import_session(db, tenant, document, limits)
        return Stored(session_id, True, len(rows), len(rows))
    stored = set(found[0]["stored_ids"])
    next_seq = found[0]["next_seq"]
    new = [row for row in rows if row["properties"]["id"] not in stored]
    if not new:
        return Stored(session_id, False, 0, len(rows))
    numbered = [{**row, "properties": {**row["properties"], "seq": next_seq + i}}
                for i, row in enumerate(new)]
    media = {digest for row in new for digest in row["media_refs"]}
    written = await db.write(
        "transcript_extend", _extend_check(session_id), session_id=session_id, tenant=tenant,
        now=utcnow(), expected_next_seq=next_seq, nodes=numbered,
        media=[m for m in document["media"] if m["sha256"] in media],
        head_id=session["head_id"], active_summary_id=session["active_summary_id"])
    await events.committed(session_id, written[0]["events"])
    return Stored(session_id, False, len(new), len(rows))


def _extend_check(session_id: str) -> Callable[[Rows], None]:
    def check(rows: Rows) -> None:
        row = rows[0]
        raise_for_problem(row["problem"], {"session_id": session_id})
        if row["violations"]:
            raise BadInput(f"the entries the transcript gained cannot follow session "
                           f"{session_id} as stored: " + "; ".join(row["violations"][:5]))

    return check
