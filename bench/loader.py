"""Bench-only bulk loading: whole histories in a few UNWIND statements.

Building 10,000-turn histories through `append_message` costs one transaction per
turn; the benchmark needs several such histories, so it writes them with the
parameterized statements in bench/cypher/, which create the very nodes, edges and
session fields that the one-by-one appends would (cypher/append_message.cypher,
cypher/session_create.cypher): same properties with the same value types, seq from
the session's next_seq, depth = predecessor's depth + 1, side_branch false, HEAD on
the last node, next_seq counting every node. `verify_shape` compares loaded nodes
with nodes written by `append_message`, and every loaded session is checked with
`Ledger.violations(session_id) == []` before it is measured.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Sequence

from service.store import Database, Ledger
from service.model.ids import new_id, utcnow
from service.store.queries import Query, load_queries
from service.tokens import estimate_tokens

from .content import ASSISTANT_METADATA, message

BENCH_CYPHER = Path(__file__).resolve().parent / "cypher"
BATCH = 2000
SYSTEM_PROMPT = "You are the ctxdag benchmark's assistant. Answer briefly."


def bench_queries() -> dict[str, Query]:
    """The service's statements plus the bench-only ones, checked by the service's own loader."""
    queries = load_queries()
    bench = load_queries(BENCH_CYPHER)
    shadowed = sorted(set(queries) & set(bench))
    if shadowed:
        raise ValueError(f"bench statements shadow service statements: {shadowed}")
    return {**queries, **bench}


@dataclass
class Chain:
    """A session's linear history as the loader left it."""

    session_id: str
    root_id: str
    head_id: str
    head_depth: int = 0
    next_seq: int = 1
    messages: int = 0  # messages written so far (the k of content.message)
    ids: list[str] = field(default_factory=list)  # node ids after ROOT, chain order
    tokens: list[int] = field(default_factory=list)
    content_bytes: int = 0


class Loader:
    def __init__(self, db: Database, ledger: Ledger) -> None:
        self.db = db  # a Database over bench_queries()
        self.ledger = ledger
        self.tenant = ledger.tenant
        self.nodes_loaded = 0
        self.seconds = 0.0

    async def new_chain(self, title: str) -> Chain:
        session = await self.ledger.sessions.create(title=title, system_prompt=SYSTEM_PROMPT)
        return Chain(session.id, session.root_id, session.root_id)

    async def extend(self, chain: Chain, count: int) -> Chain:
        """Appends `count` alternating user/assistant messages at HEAD."""
        started = time.perf_counter()
        base = utcnow()
        remaining = count
        while remaining > 0:
            size = min(BATCH, remaining)
            rows: list[dict[str, Any]] = []
            for _ in range(size):
                role, content = message(chain.messages)
                node_id = new_id("nod")
                tokens = estimate_tokens(content)
                rows.append({
                    "id": node_id, "role": role, "content": content,
                    "created_at": base + timedelta(microseconds=chain.messages),
                    "tokens": tokens,
                    "metadata": ASSISTANT_METADATA if role == "assistant" else "{}",
                    "seq": chain.next_seq, "depth": chain.head_depth + 1,
                })
                chain.ids.append(node_id)
                chain.tokens.append(tokens)
                chain.content_bytes += len(content.encode())
                chain.messages += 1
                chain.next_seq += 1
                chain.head_depth += 1
            result = await self.db.write("bench_chain_load", session_id=chain.session_id,
                                         tenant=self.tenant, pred_id=chain.head_id, rows=rows)
            if result[0]["created"] != size:
                raise RuntimeError(f"bulk load wrote {result[0]['created']} of {size} nodes")
            chain.head_id = result[0]["last_id"]
            remaining -= size
        await self.db.write("bench_chain_finish", session_id=chain.session_id,
                            tenant=self.tenant, head_id=chain.head_id,
                            next_seq=chain.next_seq, now=utcnow())
        self.nodes_loaded += count
        self.seconds += time.perf_counter() - started
        return chain

    async def sync(self, chain: Chain) -> Chain:
        """Re-reads HEAD, its depth and next_seq after writes made through the service."""
        session = await self.ledger.sessions.get(chain.session_id)
        head = await self.ledger.nodes.get(session.head_id)
        chain.head_id, chain.head_depth, chain.next_seq = head.id, head.depth, session.node_count
        return chain

    async def chain(self, title: str, count: int) -> Chain:
        return await self.extend(await self.new_chain(title), count)

    async def calls(self, session_id: str, read_sets: Sequence[Sequence[str]]) -> int:
        """Stores one successful 'chat' call per read set (prompt order), in batches of 1,000."""
        started = utcnow()
        written = 0
        for first in range(0, len(read_sets), 1000):
            batch = []
            for i, reads in enumerate(read_sets[first:first + 1000]):
                at = started + timedelta(microseconds=first + i)
                batch.append({
                    "id": new_id("cal"), "purpose": "chat", "provider": "offline",
                    "model": "offline-echo", "head_id": reads[-1], "started_at": at,
                    "finished_at": at, "input_tokens": 1000, "output_tokens": 100,
                    "error_code": None, "error_message": None, "read_ids": list(reads),
                })
            rows = await self.db.write("bench_calls_load", session_id=session_id,
                                       tenant=self.tenant, calls=batch)
            written += rows[0]["calls"]
        return written

    async def verify(self, chain: Chain) -> list[str]:
        return await self.ledger.violations(chain.session_id)

    async def verify_shape(self) -> dict[str, Any]:
        """Loaded nodes have the properties (and value types) and out-edges of appended ones."""
        reference = await self.ledger.sessions.create(title="bench shape reference",
                                                      system_prompt=SYSTEM_PROMPT)
        appended = []
        for k in range(2):
            role, content = message(k)
            meta = None if role == "user" else {"model": "offline-echo", "offline": True,
                                                "provider": "offline"}
            appended.append((await self.ledger.head.append_message(
                reference.id, role, content, metadata=meta)).node.id)
        loaded = await self.chain("bench shape loaded", 2)
        ids = appended + loaded.ids
        rows = {r["id"]: r for r in await self.db.read("bench_node_shape", node_ids=ids,
                                                        tenant=self.tenant)}
        same = all(sorted(rows[a]["props"]) == sorted(rows[b]["props"])
                   and sorted(rows[a]["out"]) == sorted(rows[b]["out"])
                   for a, b in zip(appended, loaded.ids))
        ref_session = await self.ledger.sessions.get(reference.id)
        loaded_session = await self.ledger.sessions.get(loaded.session_id)
        return {
            "same_node_shape": same,
            "same_session_fields": (ref_session.node_count, ref_session.head_id == appended[-1])
            == (loaded_session.node_count, loaded_session.head_id == loaded.ids[-1]),
            "appended_props": sorted(rows[appended[1]]["props"]),
            "loaded_props": sorted(rows[loaded.ids[1]]["props"]),
            "violations": (await self.ledger.violations(reference.id))
            + (await self.ledger.violations(loaded.session_id)),
        }


def sample_reads(ids: Sequence[str], count: int, rng: random.Random,
                 exclude: str | None = None) -> list[str]:
    pool = [i for i in ids if i != exclude]
    return rng.sample(pool, count)


def as_nodes(chain: Chain, count: int) -> list:
    """The chain's first `count` messages as service Node records (for the summarizer)."""
    from service.store import Node, Role

    now = utcnow()
    nodes = []
    for k in range(count):
        role, content = message(k)
        nodes.append(Node(
            id=chain.ids[k], session_id=chain.session_id, role=Role(role), content=content,
            created_at=now, tokens=chain.tokens[k], metadata={}, seq=k + 1, depth=k + 1,
            predecessor_id=chain.ids[k - 1] if k else chain.root_id, caller_id=None,
            side_branch=False, deleted_at=None))
    return nodes
