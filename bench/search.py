"""Workload 17: full-text search as the ledger grows to 10,000 / 100,000 / 1,000,000 nodes.

A tenant of its own is filled with bulk-loaded sessions of `search_session_nodes`
messages (bench/loader.py: the same nodes `append_message` writes, indexed by the same
transactions), each compacted but for a 40-message tail as workload 1 compacts (one
`summaries.persist`), so a hit's placement renders ~42 nodes, as a long-lived agent
session's would. A small session written through `append_message` holds
`search_planted` Chinese messages: a query whose hits do not grow with the ledger.

At each point, sampled round robin against one floor: `search()` (one page of 20 hits,
placement included: three round trips) for the planted Chinese phrase (10 hits), for a
turn number (`"4242"`: 2 hits per session) and for a word of every message (`ledger`:
the index ranks its best 2,000), the hits statement alone for that word, and an indexed
lookup (`nodes.get`, one round trip). Then the full-text index's files: Lucene's directory
of `ledger_text` under the store, after a clean restart (as workload 7 measures), per
entry it holds (every Node and Session of the database).
"""
from __future__ import annotations

from dataclasses import replace

from service.config import Settings
from service.runtime import Runtime
from service.search import Filters, search
from service.search import query as q
from service.store import Ledger, Limits
from service.store.search import SCAN_LIMIT

from .core import Bench
from .loader import Chain, Loader
from .server import dir_bytes
from .storage import checkpoint
from .timing import measure_round_robin

S17 = "17 search"
TAIL = 40
PAGE = 20
PLANTED = "图数据库"
COMMON = "ledger"
TURN = "4242"
INDEX = "ledger_text"


def _own_tenant(b: Bench) -> Bench:
    """The bench on a tenant of its own: its ledger holds exactly the nodes loaded here."""
    tenant = f"{b.tenant}-search"
    runtime = Runtime.assemble(Settings.from_env({"CTXDAG_TENANT": tenant}), b.db)
    loader = Loader(b.loader.db, Ledger.open(b.loader.db, tenant, Limits()))
    return replace(b, runtime=runtime, loader=loader, tenant=tenant)


async def _compacted_session(b: Bench, messages: int, number: int) -> Chain:
    chain = await b.loader.chain(f"bench search {number}", messages)
    covered = chain.ids[: len(chain.ids) - TAIL]
    await b.ledger.summaries.persist(
        chain.session_id, covered, f"Summary {number}: the first {len(covered)} messages.",
        absorbed_id=None, compacted_head_id=chain.ids[-1], retained_ids=chain.ids[len(covered):],
        expected_version=0, metadata={"summarizer": "bench", "trigger": "manual"}, call=None)
    return chain


async def _plant(b: Bench, count: int) -> str:
    session = await b.ledger.sessions.create("bench search planted", "You are terse.")
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        await b.ledger.head.append_message(
            session.id, role, f"第{i}条：我们使用{PLANTED}存储每一次对话的历史。")
    return session.id


def index_bytes(b: Bench, index_id: int) -> int:
    """Allocated bytes of the index's Lucene directory (Neo4j 5: schema/index/<provider>/<id>)."""
    base = b.neo.store_dir / "schema" / "index"
    dirs = [d for d in base.glob(f"*/{index_id}") if d.is_dir()] if base.is_dir() else []
    return sum(dir_bytes(d) for d in dirs)


async def search_growth(b: Bench) -> None:
    sizes = b.sizes
    own = _own_tenant(b)
    ledger = own.ledger
    planted = await _plant(own, sizes.search_planted)
    stored = 1 + sizes.search_planted  # the planted session's ROOT and messages
    chains: list[Chain] = []
    for point in sizes.search_points:
        while stored < point:
            size = min(sizes.search_session_nodes, point - stored) - 1  # ROOT counts
            size = max(size - size % 2, 2 * TAIL)
            chains.append(await _compacted_session(own, size, len(chains)))
            stored += size + 2  # ROOT, messages, summary
        b.log(f"{S17}: {stored:,} nodes in {len(chains) + 1} sessions "
              f"(bulk load so far {own.loader.seconds:.0f} s)")
        await _measure(b, ledger, chains, planted, stored)
    violations = await own.loader.verify(chains[-1]) if chains else []
    if violations:
        raise RuntimeError(f"a search session is unsound: {violations[:3]}")


async def _measure(b: Bench, ledger: Ledger, chains: list[Chain], planted: str,
                   stored: int) -> None:
    sizes = b.sizes
    lookup_id = chains[len(chains) // 2].ids[len(chains[len(chains) // 2].ids) // 2]

    def find(text: str):
        return lambda: search(ledger, text, Filters(), first=PAGE)

    common = q.parse(COMMON)
    common_query = q.node_query(common, ledger.tenant, tuple(q.Field), None)

    async def hits_alone() -> None:
        await ledger.search.hits(common_query, None, session_id=None, roles=None, since=None,
                                 until=None, offset=0, limit=PAGE + 1)

    checks = {
        "planted": (await search(ledger, PLANTED, Filters(), first=PAGE)).hits,
        "turn": (await search(ledger, f'"{TURN}"', Filters(), first=PAGE)).hits,
    }
    if len(checks["planted"]) != min(PAGE, sizes.search_planted) \
            or any(h.session_id != planted for h in checks["planted"]):
        raise RuntimeError(f"the planted phrase found {len(checks['planted'])} hits")
    fns = {
        "planted": find(PLANTED), "turn": find(f'"{TURN}"'), "common": find(COMMON),
        "hits": hits_alone, "lookup": lambda: ledger.nodes.get(lookup_id),
    }
    before = b.trips()
    stats, base = await measure_round_robin(b.driver, fns, samples=sizes.search_samples,
                                            warmup=3)
    rounds = sizes.search_samples + 3
    b.floors.append({"around": f"{S17} {stored:,}", **base.as_dict()})
    lookup = stats["lookup"].p50_ms
    turn_hits = sum(1 for c in chains if c.messages > 2 * int(TURN)) * 2
    cases = {
        "planted": f'"{PLANTED}" ({sizes.search_planted} hits, one session)',
        "turn": f'"{TURN}" (≈{turn_hits} hits, 2 per session; a page of {PAGE})',
        "common": f"{COMMON} (every message; the index ranks its best {SCAN_LIMIT:,})",
        "hits": f"{COMMON}: the hits statement alone (no placement)",
        "lookup": "indexed lookup: nodes.get(id)",
    }
    for name, case in cases.items():
        s = stats[name]
        b.add(S17, f"{stored:,} nodes: {case}", s, base,
              note=f"{s.p50_ms / lookup:.2f}× the indexed lookup's p50 ({lookup:.2f} ms)"
              if name != "lookup" else "the other floor: one indexed node read",
              nodes=stored, sessions=len(chains) + 1, vs_lookup=round(s.p50_ms / lookup, 2))
        b.log(f"{S17}: {stored:,} nodes, {name}: p50 {s.p50_ms:.2f} ms = "
              f"{s.p50_ms / base.p50_ms:.2f}× floor, {s.p50_ms / lookup:.2f}× lookup")
    b.facts.setdefault("search_round_trips_per_round", {})[str(stored)] = round(
        (b.trips() - before) / rounds, 2)
    content = sum(c.content_bytes for c in chains) / max(1, sum(c.messages for c in chains))
    await _index_size(b, stored, content)


async def _index_size(b: Bench, stored: int, content: float) -> None:
    index_id = (await b.loader.db.read("bench_fulltext_index", name=INDEX))[0]["id"]
    entries = (await b.loader.db.read("bench_indexed_entries"))[0]["entries"]
    await checkpoint(b)  # a clean restart: Lucene's segments flushed
    size = index_bytes(b, index_id)
    per = size / entries if entries else 0
    b.add(S17, f"{stored:,} nodes: index size per entry", None, None, value=round(per),
          unit="bytes/entry",
          note=f"{INDEX}: {size / 1e6:.1f} MB for {entries:,} nodes and sessions in the database "
               f"(all tenants); message content {content:.0f} B (UTF-8) on average",
          index_bytes=size, entries=entries, nodes=stored)
    b.log(f"{S17}: {INDEX} {size / 1e6:.1f} MB, {per:.0f} B per entry ({entries:,})")

