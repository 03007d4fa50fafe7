"""No statement scans a whole label or relationship type of the store (but `ctxdag check`'s
list of every session), and an import's work follows its session, whatever statistics
Neo4j planned them with.

Planned on a young store (few summaries, few tool uses, few sessions), the import's counts
and checks became scans of every COVERS, USES, CALLER… edge in the store, and the check of
a message's tool uses sought all the session's tool uses once per message (quadratic in a
session's tool uses: a 3,000-entry import took 10 s instead of 0.6 s). `backup_import`
keeps its first plan (`replan=skip`), so such a plan stayed for the life of the server.
"""
import uuid

from bench.profiled import profiled
from bench.transcripts import claude_code_transcript
from service import transcripts
from service.store import Ledger, Limits
from service.store.transcript_parts import import_in_parts
from service.store.transcripts import store_transcript
from service.transcripts import streamed
from service.transcripts.model import Mode
from tests.integration.test_render import long_chain

# Operators whose work follows the whole store (a label's or a type's every entry).
STORE_SCANS = ("AllNodesScan", "NodeByLabelScan", "UnionNodeByLabelsScan",
               "RelationshipTypeScan", "UnionRelationshipTypesScan", "AllRelationshipsScan")
# The one statement whose work is the store's by purpose: `ctxdag check` lists every session.
STORE_WIDE = {"check_session_ids"}


def _operators(plan: dict) -> list[dict]:
    """The plan's operators, each with its children."""
    found = [plan]
    for child in plan.get("children", []):
        found.extend(_operators(child))
    return found


async def test_no_statement_scans_the_store(db):
    for name, query in sorted(db.queries.items()):
        if name in STORE_WIDE:
            continue
        async with db.driver.session(database=db.database) as session:
            result = await session.run("EXPLAIN " + query.text,
                                       {"args": {p: None for p in query.params}})
            plan = (await result.consume()).plan
        scans = [(op["operatorType"], op.get("args", {}).get("Details"))
                 for op in _operators(plan) if any(s in op["operatorType"] for s in STORE_SCANS)]
        assert scans == [], (name, scans)


async def _import_db_hits(db, entries: int) -> tuple[int, int]:
    """(db hits of the import statement, tool uses it writes) for a generated Claude Code
    file of `entries` entries, profiled and rolled back."""
    tenant = f"plans-{uuid.uuid4().hex[:8]}"
    document = transcripts.read("".join(claude_code_transcript(entries)),
                                f"{tenant}.jsonl", None, tenant, Limits())
    tool_uses = sum(len(row["properties"].get("tool_use_ids") or ())
                    for row in document["nodes"])
    hits: dict[str, int] = {}
    execute = db._execute

    async def profile(query, bound, routing, check):
        if query.name != "backup_import":
            return await execute(query, bound, routing, check)
        rows, plan = await profiled(db, query, bound)
        hits["import"] = sum(int(op.get("dbHits", 0)) for op in _operators(plan))
        return rows

    db._execute = profile
    try:
        await store_transcript(db, tenant, document, Limits(),
                               Ledger.open(db, tenant, Limits(), None).events)
    finally:
        del db._execute
    return hits["import"], tool_uses


async def test_an_import_costs_in_proportion_to_its_session(db):
    small, small_uses = await _import_db_hits(db, 600)
    large, large_uses = await _import_db_hits(db, 2400)
    assert small_uses > 50 and large_uses >= 3.5 * small_uses
    # Four times the entries and tool uses: at most about four times the db hits.
    assert large / small < 4.6, (small, large)


async def _page_db_hits(ledger, length: int) -> dict[str, int]:
    """The db hits of a page of 100 nodes from the middle of a session of `length` turns,
    as the check and the export read it, profiled."""
    session = await long_chain(ledger, length)
    db, after = ledger.db, length // 2
    last = f"{session.id}-{after}"  # the page before ended with turn `after`
    pages = {"check_session_nodes": {"after_seq": after, "after_id": last, "page": 100},
             "backup_export_nodes": {"node_after_seq": after, "node_after_id": last,
                                     "node_page": 100}}
    hits = {}
    for name, params in pages.items():
        query = db.queries[name]
        rows, plan = await profiled(db, query, query.bind(
            {"session_id": session.id, "tenant": ledger.tenant, **params}))
        assert [n.get("seq", n.get("properties", {}).get("seq")) for n in rows[0]["nodes"]] \
            == list(range(after + 1, after + 101))
        hits[name] = sum(int(op.get("dbHits", 0)) for op in _operators(plan))
    return hits


async def test_a_page_of_the_check_or_the_export_costs_the_same_at_ten_times_the_session(
        ledger):
    """Pages are read on from the last node of the page before, in the (session_id, seq)
    index's order: no page sorts the session's nodes."""
    small, large = await _page_db_hits(ledger, 1_000), await _page_db_hits(ledger, 10_000)
    for name in small:
        assert large[name] < 1.2 * small[name], (name, small, large)


async def test_each_part_of_an_import_in_parts_costs_what_the_part_holds(db, monkeypatch):
    """A part's check that none of its tool uses' ids is taken seeks each by (session, id):
    planned on a young store it sought all the session's tool uses once per tool use, so
    each part cost more than the one before (a 160,000-entry file took ten times as long)."""
    tenant = f"plans-parts-{uuid.uuid4().hex[:8]}"
    text = "".join(claude_code_transcript(3_000))
    planned = streamed.read_given(text, f"{tenant}.jsonl", None, tenant, Limits(), Mode())
    hits: list[int] = []
    execute = db._execute

    async def profile(query, bound, routing, check):
        if query.name != "transcript_import_part":
            return await execute(query, bound, routing, check)
        _, plan = await profiled(db, query, bound)  # rolled back: then written
        hits.append(sum(int(op.get("dbHits", 0)) for op in _operators(plan)))
        return await execute(query, bound, routing, check)

    monkeypatch.setattr(db, "_execute", profile)
    await import_in_parts(db, tenant, planned, Limits(), part_nodes=200)
    assert len(hits) >= 8
    full = hits[:-1]  # the last part may hold fewer rows
    assert max(full[len(full) // 2:]) < 1.25 * max(full[1:len(full) // 2]), hits
