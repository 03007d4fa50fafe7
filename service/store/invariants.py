"""The storage invariants of a session, checked on the stored data.

The structure (HEAD, ROOT, chains, coverage, reads, tool pairs) is checked in Cypher;
every record's properties by the rules the API's writes apply (records.py), so a value
only an import or a hand edit could have stored is named too, and so are the edges and
media a node's blocks imply. The nodes are read and checked a page at a time, so a session
of any length is checked in the memory of a page.
"""
from __future__ import annotations

from typing import Any, AsyncIterator, Mapping

from . import records
from ..model import validate
from ..errors import Conflict
from .db import Database
from ..model.validate import Limits

# A session's nodes checked a page at a time: a result of Neo4j's is one message, and all
# the properties of a long session's nodes are more than its network buffers take (331 MB
# for 170,000 Claude Code turns).
PAGE_NODES = 5_000
# Checks begun again when the session was written to between their pages.
CHECK_ATTEMPTS = 3
# The first page's cursor: before every node (seqs are integers of Neo4j's range).
_BEFORE_ALL = {"after_seq": -validate.MAX_INTEGER - 1, "after_id": ""}
# What reference_problems reads of a node.
_REFERRING = ("id", "role", *records.NODE_REFERENCES)


async def violations(db: Database, tenant: str, session_id: str, limits: Limits) -> list[str]:
    validate.identifier(session_id, "session id")
    return await _check(db, tenant, session_id, limits)


async def _check(db: Database, tenant: str, session_id: str, limits: Limits) -> list[str]:
    for _ in range(CHECK_ATTEMPTS):
        read = await _check_read(db, tenant, session_id, limits)
        if read is not None:
            return read
    raise Conflict(f"session {session_id} was written to while it was checked, "
                   f"{CHECK_ATTEMPTS} times; check it again once it is quiet")


async def _check_read(db: Database, tenant: str, session_id: str, limits: Limits
                      ) -> list[str] | None:
    """The session's violations, its nodes read a page at a time; None when it was written
    to between its pages (its next seq moved), which the pages would not see as one."""
    rows = await db.read("check_session", session_id=session_id, tenant=tenant,
                         page=PAGE_NODES, **_BEFORE_ALL)
    if not rows:
        return []
    row = rows[0]
    nodes = _Nodes(tenant, limits)
    page = row
    while len(page["nodes"]) == PAGE_NODES and nodes.count + PAGE_NODES < row["node_count"]:
        nodes.take(page)
        last = page["nodes"][-1]
        found = await db.read("check_session_nodes", session_id=session_id, tenant=tenant,
                              after_seq=last["seq"], after_id=last.get("id"), page=PAGE_NODES)
        if not found or found[0]["next_seq"] != row["session"].get("next_seq"):
            return None
        page = found[0]
    nodes.take(page)
    unread = row["node_count"] - nodes.count  # their seq is not a number
    calls = [_untenanted(c) for c in row["calls"]]
    strangers = nodes.strangers + [
        f"tenant: {records.label('call', r)} is stored under another tenant"
        for r in row["calls"] if r.get("tenant") != tenant] + nodes.media_strangers
    problems = records.record_problems("session", _untenanted(row["session"]),
                                       records.SESSION, limits)
    problems += nodes.problems
    for call in calls:
        problems += records.record_problems("call", call, records.CALL, limits)
    problems += records.reference_problems(nodes.references, calls)
    problems += nodes.media_problems
    labels = [entry for entry in row["labels"] if entry["node_session_id"] == session_id]
    strangers += [f"label: the session labels node {entry['node_id']} of another session"
                  for entry in row["labels"] if entry["node_session_id"] != session_id]
    problems += records.label_problems(labels, set(nodes.roles), limits)
    names = [entry for entry in row["branch_names"] if entry["node_session_id"] == session_id]
    strangers += [f"branch name: the session names node {entry['node_id']} of another session"
                  for entry in row["branch_names"] if entry["node_session_id"] != session_id]
    problems += records.branch_name_problems(names, set(nodes.roles), limits)
    pins = [entry for entry in row["pins"] if entry["node_session_id"] == session_id]
    strangers += [f"pin: the session pins node {entry['node_id']} of another session"
                  for entry in row["pins"] if entry["node_session_id"] != session_id]
    problems += records.pin_problems(pins, {node_id: {"role": role} for node_id, role
                                            in nodes.roles.items()}, limits)
    unpaged = [f"seq: {unread} of the session's {row['node_count']} nodes have no numeric "
               "seq, so no page of its nodes holds them: they were not checked further"
               ] if unread > 0 else []
    return (row["violations"] + unpaged + strangers + [f"property: {p}" for p in problems]
            + nodes.edges)


class _Nodes:
    """What checking a session's nodes finds, taken a page at a time (check_session's first,
    check_session_nodes' next), so that no more than a page of their properties is held:
    each node's problems, and what the checks of the session's references, labels and pins
    need of every node (its id, role and the ids it names)."""

    def __init__(self, tenant: str, limits: Limits) -> None:
        self.tenant, self.limits = tenant, limits
        self.strangers: list[str] = []
        self.media_strangers: list[str] = []
        self.problems: list[str] = []
        self.media_problems: list[str] = []
        self.edges: list[str] = []
        self.references: list[dict[str, Any]] = []
        self.roles: dict[Any, Any] = {}
        self.count = 0  # the nodes taken
        self._media: set[Any] = set()

    def take(self, page: Mapping[str, Any]) -> None:
        self.count += len(page["nodes"])
        self.strangers += [f"tenant: {records.label('node', r)} is stored under another tenant"
                           for r in page["nodes"] if r.get("tenant") != self.tenant]
        by_id = {}
        for stored in page["nodes"]:
            node = _untenanted(stored)
            self.problems += records.node_problems(node, self.limits)
            by_id[node.get("id")] = node
            self.roles[node.get("id")] = node.get("role")
            self.references.append({key: node[key] for key in _REFERRING if key in node})
        for medium in page["media"]:
            key = (repr(medium.get("sha256")), repr(medium.get("tenant")))
            if key in self._media:
                continue  # carried by nodes of an earlier page too
            self._media.add(key)
            if medium.get("tenant") != self.tenant:
                self.media_strangers.append(
                    f"tenant: media {medium.get('sha256')} is stored under another tenant")
            self.media_problems += records.medium_problems(_untenanted(medium), self.limits)
        self.edges += [p for e in page["edges"]
                       for p in records.edge_problems(by_id.get(e["id"], {}), e, self.limits)]


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
