"""`ctxdag smoke`: writes a small conversation with a fork, then reads it back."""
from __future__ import annotations

from .store import Ledger


async def run_smoke(ledger: Ledger, out=print) -> None:
    session = await ledger.sessions.create("smoke test", "You are a concise assistant.")
    head = ledger.head
    q1 = (await head.append_message(session.id, "user", "What is a DAG?")).node
    await head.append_message(session.id, "assistant", "A directed graph without cycles.")
    await head.append_message(session.id, "user", "And a HEAD?")
    await head.append_message(session.id, "assistant", "The node the conversation continues from.")
    edited = await head.edit(q1.id, "What is a directed acyclic graph?")
    await head.append_message(session.id, "assistant", "A graph whose edges never loop back.")

    stored = await ledger.sessions.get(session.id)
    out(f"session {stored.id} ({stored.node_count} nodes), HEAD {stored.head_id}")
    for branch in await ledger.branches.list(session.id):
        marker = "*" if branch.is_head else " "
        out(f" {marker} branch of {branch.length} nodes, tip {branch.tip.id}: "
            f"{branch.tip.content!r}")
    problems = await ledger.violations(session.id)
    out("invariants: ok" if not problems else "invariants broken: " + "; ".join(problems))
    if problems or edited.predecessor_id != session.root_id:
        raise SystemExit(1)
