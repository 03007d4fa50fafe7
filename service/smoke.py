"""`ctxdag smoke`: writes a small conversation with a fork, compacts it, reads it back."""
from __future__ import annotations

from .context.render import render_context
from .runtime import Runtime

TURNS = [
    ("user", "What is a DAG? I keep hearing the word in talks about version control, build "
             "systems and now chat histories, and I would like one clear definition."),
    ("assistant", "A directed graph without cycles. Every edge points one way, so following "
                  "edges never brings you back to where you started; a chat history with "
                  "retries and edits is one, because each message points at the one before."),
    ("user", "And a HEAD? Is it a node or a pointer, and who is allowed to move it around "
             "while several things write to the same conversation?"),
    ("assistant", "The node the conversation continues from. It is a pointer to one node, and "
                  "only explicit user moves change it: sending, retrying, editing, checkout."),
    ("user", "What does compaction do? Does it delete the old turns it summarizes?"),
    ("assistant", "It writes one summary that stands in for old turns. Nothing is deleted."),
]


async def run_smoke(runtime: Runtime, out=print) -> int:
    ledger = runtime.ledger
    session = await ledger.sessions.create("smoke test", "You are a concise assistant.")
    nodes = [(await ledger.head.append_message(session.id, role, text)).node
             for role, text in TURNS]
    fork = (await ledger.head.edit(nodes[0].id, "What is a directed acyclic graph?")).node
    await ledger.head.append_message(session.id, "assistant", "A graph whose edges never loop.")
    await ledger.head.set_head(session.id, nodes[-1].id)
    result = await runtime.compactor.compact(session.id, keep_recent_tokens=50)

    stored = await ledger.sessions.get(session.id)
    out(f"session {stored.id}: {stored.node_count} nodes, HEAD {stored.head_id}")
    out(f"compaction: {result.status.value}"
        + (f", summary {result.summary.id} covers {result.covered_count} turns "
           f"({result.tokens_before} -> {result.tokens_after} tokens, "
           f"by {result.summary.node.metadata['summarizer']})" if result.summary else
           f" ({result.message})"))
    for branch in await ledger.branches.list(session.id):
        view = await render_context(ledger, session.id, branch.tip.id)
        marker = "*" if branch.is_head else " "
        out(f" {marker} branch of {branch.length} nodes renders {len(view.nodes)}: "
            + " ".join(n.role.value for n in view.nodes))
    problems = await ledger.violations(session.id)
    out("invariants: ok" if not problems else "invariants broken: " + "; ".join(problems))
    return 1 if problems or fork.predecessor_id != session.root_id else 0
