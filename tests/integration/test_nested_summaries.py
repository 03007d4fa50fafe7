"""Nested summaries (segmented strategy, docs/segmented.md "Nesting") on the real store: a
merge's write, its failure, ctxdag check, and backup export and import."""
import copy

import pytest

from service.context.budget import BudgetPolicy
from service.context.render import render_context
from service.context.summarizers import OfflineExtractiveSummarizer
from service.errors import BadInput, ModelError
from service.store import Ledger, Limits
from service.store.backup import export_session, import_session
from tests.integration.helpers import (
    DELETE_SESSION, KEEP_FOUR, chat, make_compactor, run_cypher, session_calls,
    stored_events, turns,
)

MERGING = BudgetPolicy(segment_merge_share=0.0006)  # merges past 120 tokens


async def merged_session(ledger, compactor):
    """A segmented session compacted until a compaction merged: (session, its result)."""
    session = await ledger.sessions.create("nested", "sys", summary_strategy="segmented")
    await chat(ledger, session, *turns(4))
    for k in range(12):
        await chat(ledger, session, *turns(4, start=10 * (k + 1)))
        result = await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
        assert result.status.value == "COMPACTED", result.message
        if result.nested is not None:
            return session, result
    raise AssertionError("no merge in twelve compactions")


async def test_a_merge_writes_one_nested_summary_of_the_oldest_stand_ins(ledger, db):
    compactor = make_compactor(ledger, policy=MERGING)
    session, result = await merged_session(ledger, compactor)
    nested = result.nested
    merged = await ledger.summaries.get_many(nested.nested_ids)
    assert len(merged) == len(nested.nested_ids) >= 2
    assert nested.covers_ids == tuple(t for s in merged for t in s.covers_ids)
    assert nested.node.predecessor_id == merged[0].node.predecessor_id
    view = await render_context(ledger, session.id)
    assert view.stand_in_ids[0] == nested.id and result.summary.id in view.stand_in_ids
    assert not set(nested.nested_ids) & set(view.stand_in_ids)
    # The merge's call read the summaries it merged, and was announced as a compaction.
    call = (await session_calls(ledger, session.id))[-1]
    reads = await run_cypher(db, "MATCH (:Call {id: $c})-[r:READ]->(n) RETURN n.id AS id "
                                 "ORDER BY r.position", c=call.id)
    assert [r["id"] for r in reads] == list(nested.nested_ids)
    assert call.purpose.value == "summarize"
    events = [e.type for e in await stored_events(ledger, session.id)][-4:]
    assert events == ["compaction_started", "compaction_finished"] * 2
    assert await ledger.violations(session.id) == []
    with pytest.raises(BadInput, match=f"merged into nested summary {nested.id}"):
        await ledger.summaries.retire(nested.nested_ids[-1])


class FailingMerge(OfflineExtractiveSummarizer):
    async def merge(self, summaries):
        raise ModelError("the model is overloaded")


async def test_a_failed_merge_leaves_the_compaction_written_and_says_why(ledger):
    compactor = make_compactor(ledger, policy=MERGING, summarizer=FailingMerge())
    session = await ledger.sessions.create("nested fails", "sys", summary_strategy="segmented")
    await chat(ledger, session, *turns(4))
    for k in range(12):
        await chat(ledger, session, *turns(4, start=10 * (k + 1)))
        result = await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
        assert result.status.value == "COMPACTED" and result.nested is None
        if result.merge_error:
            break
    assert "the model is overloaded" in result.merge_error
    view = await render_context(ledger, session.id)
    assert view.stand_in_ids[-1] == result.summary.id
    assert (await session_calls(ledger, session.id))[-1].error_code == "MODEL_ERROR"
    assert [e.type for e in await stored_events(ledger, session.id)][-2:] == [
        "compaction_started", "compaction_failed"]
    assert await ledger.violations(session.id) == []


async def test_check_names_nested_ids_that_do_not_make_up_the_segment(ledger, db):
    session, result = await merged_session(ledger, make_compactor(ledger, policy=MERGING))
    await run_cypher(db, "MATCH (x:Node {id: $x}) SET x.nested_ids = tail(x.nested_ids)",
                     x=result.nested.id)
    assert await ledger.violations(session.id) == [
        f"summary: nested {result.nested.id}'s nested_ids are not earlier summaries of this "
        "session whose segments make up its own"]
    await run_cypher(db, DELETE_SESSION, sid=session.id)


async def test_a_nested_summary_survives_export_and_import(ledger, db, tenant):
    session, result = await merged_session(ledger, make_compactor(ledger, policy=MERGING))
    before = [n.id for n in (await render_context(ledger, session.id)).nodes]
    document = await export_session(db, tenant, session.id, Limits())
    await run_cypher(db, DELETE_SESSION, sid=session.id)
    other = f"{tenant}-nested"
    try:
        bad = copy.deepcopy(document)
        row = next(n for n in bad["nodes"] if n["properties"]["id"] == result.nested.id)
        row["properties"]["nested_ids"] = [before[0]]  # ROOT: not a summary
        with pytest.raises(BadInput, match="nested_ids .* is not a summary of this session"):
            await import_session(db, other, bad, Limits())
        assert await import_session(db, other, document, Limits()) == session.id
        imported = Ledger.open(db, other, Limits())
        assert await imported.violations(session.id) == []
        assert (await imported.summaries.get(result.nested.id)).nested_ids == \
            result.nested.nested_ids
        assert [n.id for n in (await render_context(imported, session.id)).nodes] == before
    finally:
        await run_cypher(db, DELETE_SESSION, sid=session.id)
