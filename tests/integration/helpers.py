"""Small helpers the integration tests share."""
from __future__ import annotations

from service.store import Ledger, Node, Session


async def chat(ledger: Ledger, session: Session, *turns: str) -> list[Node]:
    """Appends alternating user/assistant turns at HEAD; returns the new nodes."""
    nodes = []
    for i, text in enumerate(turns):
        role = "user" if i % 2 == 0 else "assistant"
        appended = await ledger.head.append_message(session.id, role, text)
        assert appended.head_moved
        nodes.append(appended.node)
    return nodes


async def head_id(ledger: Ledger, session_id: str) -> str:
    return (await ledger.sessions.get(session_id)).head_id


async def branch_tips(ledger: Ledger, session_id: str) -> dict[str, tuple[int, bool]]:
    """tip content -> (length, is_head)."""
    return {b.tip.content: (b.length, b.is_head) for b in await ledger.branches.list(session_id)}


async def snapshot(ledger: Ledger, session_id: str) -> tuple:
    """Everything a bad input must leave untouched: the session row, nodes and edges."""
    rows, _, _ = await ledger.db.driver.execute_query(
        "MATCH (s:Session {id: $sid}) "
        "OPTIONAL MATCH (n:Node {session_id: $sid}) "
        "WITH s, n ORDER BY n.seq "
        "RETURN properties(s) AS s, [(s)-[:HEAD]->(h) | h.id] AS head, "
        "collect([properties(n), [(n)-[r]->(m) | [type(r), m.id]]]) AS nodes",
        sid=session_id,
    )
    return tuple(rows[0].values()) if rows else ()


async def assert_sound(ledger: Ledger, session_id: str) -> None:
    assert await ledger.violations(session_id) == []


async def rendered(ledger: Ledger, session_id: str, head: str | None = None) -> list[str]:
    from service.context.render import render_context

    return list((await render_context(ledger, session_id, head)).node_ids)


def turns(count: int, start: int = 0) -> list[str]:
    """Alternating user/assistant texts of ~10 tokens each (40 characters)."""
    return [f"{'question' if i % 2 == 0 else 'answer'} {i:03d} ".ljust(40, ".")
            for i in range(start, start + count)]
