"""The storage invariants of a session, checked on the stored data.

The structure (HEAD, ROOT, chains, coverage, reads, tool pairs) is checked in Cypher;
every record's properties by the rules the API's writes apply (records.py), so a value
only an import or a hand edit could have stored is named too, and so are the edges and
media a node's blocks imply.
"""
from __future__ import annotations

from typing import Any, AsyncIterator, Mapping

from . import records
from ..model import validate
from .db import Database
from ..model.validate import Limits


async def violations(db: Database, tenant: str, session_id: str, limits: Limits) -> list[str]:
    validate.identifier(session_id, "session id")
    return await _check(db, tenant, session_id, limits)


async def _check(db: Database, tenant: str, session_id: str, limits: Limits) -> list[str]:
    rows = await db.read("check_session", session_id=session_id, tenant=tenant)
    if not rows:
        return []
    row = rows[0]
    strangers = [f"tenant: {records.label(kind, r)} is stored under another tenant"
                 for kind in ("node", "call") for r in row[f"{kind}s"]
                 if r.get("tenant") != tenant]
    strangers += [f"tenant: media {m.get('sha256')} is stored under another tenant"
                  for m in row["media"] if m.get("tenant") != tenant]
    nodes = [_untenanted(n) for n in row["nodes"]]
    problems = records.problems(_untenanted(row["session"]), nodes,
                                [_untenanted(c) for c in row["calls"]], limits)
    problems += [p for m in row["media"] for p in records.medium_problems(_untenanted(m), limits)]
    by_id = {n.get("id"): n for n in nodes}
    edges = [p for e in row["edges"]
             for p in records.edge_problems(by_id.get(e["id"], {}), e, limits)]
    labels = [entry for entry in row["labels"] if entry["node_session_id"] == session_id]
    strangers += [f"label: the session labels node {entry['node_id']} of another session"
                  for entry in row["labels"] if entry["node_session_id"] != session_id]
    problems += records.label_problems(labels, set(by_id), limits)
    names = [entry for entry in row["branch_names"] if entry["node_session_id"] == session_id]
    strangers += [f"branch name: the session names node {entry['node_id']} of another session"
                  for entry in row["branch_names"] if entry["node_session_id"] != session_id]
    problems += records.branch_name_problems(names, set(by_id), limits)
    pins = [entry for entry in row["pins"] if entry["node_session_id"] == session_id]
    strangers += [f"pin: the session pins node {entry['node_id']} of another session"
                  for entry in row["pins"] if entry["node_session_id"] != session_id]
    problems += records.pin_problems(pins, by_id, limits)
    return row["violations"] + strangers + [f"property: {p}" for p in problems] + edges


def _untenanted(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's properties without `tenant`, which the ledger sets and the API never does."""
    return {k: v for k, v in record.items() if k != "tenant"}


async def check_each(db: Database, limits: Limits,
                     tenant: str | None = None) -> AsyncIterator[tuple[str, list[str]]]:
    """(session id, violations) for every session of `tenant`, or of every tenant when None.

    One statement lists the sessions, then each is checked by the same statement as
    `violations`, one at a time, so a large store is never checked in one transaction.
    """
    for row in await db.read("check_session_ids", tenant=tenant):
        if row["tenant"] is None:
            yield row["session_id"], ["tenant: the session has no tenant"]
            continue
        yield row["session_id"], await _check(db, row["tenant"], row["session_id"], limits)
