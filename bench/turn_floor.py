"""The store's floor for a turn (workload 8): what the writes the design requires cost in
Neo4j alone, beside the service's turn, in the same run.

A turn stores the user's message before the model is called and the reply with its call
after it (two transactions: the two-step turn is the one path, docs/concepts/provenance.md),
and the call holds a READ edge, with its position, to every node its prompt contained (the
design card's rule). A floor round writes exactly that as bare Cypher — the user's node;
then the reply's node, its Call, and the READ edges to the same nodes the timed turn's call
read — with no checks, no lock, no events, no shared-prefix sums and no Python beyond two
`Database.write`s: no implementation of the rule can write less. Each round runs right
after a timed turn, on a session of its own, so both see the JVM in the same state; what
the rounds wrote is deleted after each window (the store's growth per turn at N = 5,000
moved by 0.2%: 30,382 and 30,397 bytes in two runs with the rounds, 30,337 without).
"""
from __future__ import annotations

import time

from service.model.ids import new_id
from service.tokens import estimate_tokens

from .core import Bench


class StoreFloor:
    def __init__(self, b: Bench, session_id: str, root_id: str) -> None:
        self.b, self.session_id, self.root_id = b, session_id, root_id
        self.tip, self.seq = root_id, 1

    @classmethod
    async def open(cls, b: Bench) -> StoreFloor:
        chain = await b.loader.new_chain("bench peer: the store's floor")
        return cls(b, chain.session_id, chain.root_id)

    async def round(self, call_id: str, user: str, reply: str) -> float:
        """One floor round reading what call `call_id` read: its seconds."""
        db, tenant = self.b.loader.db, self.b.tenant
        (read,) = await db.read("bench_call_read_elements", call_id=call_id, tenant=tenant)
        user_id, reply_id = new_id("nod"), new_id("nod")
        t0 = time.perf_counter()
        await db.write("bench_floor_message", predecessor_id=self.tip, tenant=tenant,
                       node_id=user_id, content=user, tokens=estimate_tokens(user),
                       seq=self.seq)
        await db.write("bench_floor_reply", predecessor_id=user_id, tenant=tenant,
                       node_id=reply_id, call_id=new_id("cal"), content=reply,
                       tokens=estimate_tokens(reply), seq=self.seq + 1,
                       read_element_ids=read["element_ids"])
        elapsed = time.perf_counter() - t0
        self.tip, self.seq = reply_id, self.seq + 2
        return elapsed

    async def clear(self) -> None:
        """Deletes what the rounds wrote (the session and its ROOT stay)."""
        await self.b.loader.db.write("bench_floor_clear", session_id=self.session_id,
                                     tenant=self.b.tenant, root_id=self.root_id)
        self.tip = self.root_id
