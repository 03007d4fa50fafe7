"""Workload 7: bytes on disk per turn as one conversation grows.

The store directory (data/databases/neo4j: node, relationship, property and string
records, indexes, counts) is measured as allocated bytes (what `du` counts) while
Neo4j is cleanly shut down, which checkpoints it: `CALL db.checkpoint()` is not
registered in Neo4j 5.26 Community. The transaction logs (data/transactions/neo4j),
Neo4j's write-ahead log, rotated and pruned by its retention policy, are reported
apart. A turn here is one node (one message).
"""
from __future__ import annotations

from .core import Bench
from .loader import Chain

S7 = "7 storage per turn"


WARM_UP_PINGS = 1000


async def checkpoint(b: Bench) -> dict[str, int]:
    """Stops Neo4j cleanly, measures its files, starts it again; the driver reconnects.

    The restarted JVM is cold: the floor round trip is 2–4× slower for its first few
    seconds, so a warm-up of floor pings follows, or the next workload's floor (and
    every ratio divided by it) would drift while it runs.
    """
    if not b.sizes.isolated_stores:
        return {"store": b.neo.store_bytes(), "store_apparent": b.neo.store_apparent_bytes(),
                "tx_logs": b.neo.tx_log_bytes()}
    sizes = b.neo.restart()
    await b.driver.verify_connectivity()
    for _ in range(WARM_UP_PINGS):
        await b.driver.execute_query("RETURN 1")
    return sizes


async def storage(b: Bench) -> Chain:
    """Grows one session to the largest storage point; returns it for later workloads."""
    start = await checkpoint(b)
    chain = await b.loader.new_chain("bench storage")
    for point in b.sizes.storage_points:
        await b.loader.extend(chain, point - chain.messages)
        now = await checkpoint(b)
        store = now["store"] - start["store"]
        apparent = now["store_apparent"] - start["store_apparent"]
        tx = now["tx_logs"] - start["tx_logs"]
        per_turn = store / point
        content = chain.content_bytes / chain.messages
        b.add(S7, f"{point:,} turns", None, None, value=round(per_turn), unit="bytes/turn",
              note=f"store +{store / 1e6:.1f} MB ({apparent / point:.0f} B/turn apparent); "
                   f"content {content:.0f} B/turn (UTF-8)",
              store_bytes=store, store_apparent_bytes=apparent, tx_log_bytes=tx,
              content_bytes_per_turn=round(content, 1), turns=point)
        b.log(f"{S7}: {point} turns: {per_turn:.0f} bytes/turn (content {content:.0f})")
    violations = await b.loader.verify(chain)
    if violations:
        raise RuntimeError(f"the storage session is unsound: {violations[:3]}")
    b.facts["storage_session_verified"] = True
    return chain
