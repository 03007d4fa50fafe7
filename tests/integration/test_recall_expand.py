"""history_expand and history_search at the ledger level (service/recall): the pure
functions the built-in tools and the MCP server answer with."""
import pytest

from service.errors import BadInput
from service.recall import expand, search_covered
from tests.integration.helpers import KEEP_FOUR, assert_sound, chat, turns


async def compact(compactor, session_id, head=None):
    result = await compactor.compact(session_id, head_id=head, keep_recent_tokens=KEEP_FOUR)
    assert result.status.value == "COMPACTED", result.message
    return result.summary


async def all_pages(ledger, session_id, summary_id, budget):
    pages, cursor = [], None
    while True:
        page = await expand(ledger, session_id, summary_id, None, budget, cursor)
        pages.append(page)
        cursor = page.next_cursor
        if cursor is None:
            return pages


async def test_expand_returns_the_covered_turns_in_chain_order(ledger, compactor):
    session = await ledger.sessions.create("expand", "sys")
    t = await chat(ledger, session, *turns(12))
    summary = await compact(compactor, session.id)
    page = await expand(ledger, session.id, summary.id, None, 100_000)
    assert [n.id for n in page.turns] == [n.id for n in t[:8]]
    assert [n.content for n in page.turns] == [n.content for n in t[:8]]
    assert (page.start, page.total, page.next_cursor) == (0, 8, None)
    await assert_sound(ledger, session.id)


async def test_pages_keep_within_the_budget_and_tool_pairs_whole(ledger, compactor):
    session = await ledger.sessions.create("pairs", "sys")
    ids = []
    for i in range(6):
        user = await ledger.head.append_message(session.id, "user", f"question {i} " + "x" * 80)
        use = await ledger.head.append_message(session.id, "assistant", blocks=[
            {"type": "text", "text": f"looking {i}"},
            {"type": "tool_use", "id": f"toolu_{i}", "name": "grep", "input": {"q": str(i)}}])
        result = await ledger.head.append_message(session.id, "tool", blocks=[
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "y" * 120}])
        ids += [user.node.id, use.node.id, result.node.id]
    await ledger.head.append_message(session.id, "user", "and now?")
    summary = await compact(compactor, session.id)
    covered = summary.covers_ids
    budget = 60
    pages = await all_pages(ledger, session.id, summary.id, budget)
    assert [n.id for p in pages for n in p.turns] == list(covered)
    assert len(pages) > 2
    for page in pages:
        ids_ = [n.id for n in page.turns]
        assert sum(n.tokens for n in page.turns) <= budget or len(ids_) <= 2
        first, last = page.turns[0], page.turns[-1]
        assert first.role.value != "tool", "a page never opens with the result of a pair"
        assert not (last.role.value == "assistant" and "tool_use" in (last.blocks_json or ""))


async def test_only_summaries_the_render_shows_expand(ledger, compactor):
    session = await ledger.sessions.create("shown", "sys")
    await chat(ledger, session, *turns(8))
    s1 = await compact(compactor, session.id)
    await chat(ledger, session, *turns(8, start=8))
    s2 = await compact(compactor, session.id)
    assert s2.absorbed_id == s1.id
    with pytest.raises(BadInput, match="not shown"):
        await expand(ledger, session.id, s1.id, None)
    with pytest.raises(BadInput, match="cursor"):
        await expand(ledger, session.id, s2.id, None, cursor="bm9wZQ==")
    page = await expand(ledger, session.id, s2.id, None)
    assert page.total == len(s2.covers_ids)


async def test_search_covered_finds_only_what_a_summary_stands_in_for(ledger, compactor):
    session = await ledger.sessions.create("search", "sys")
    t = await chat(ledger, session, "the vault code is walrus-42", "noted, walrus", *turns(10))
    await chat(ledger, session, "walrus again, verbatim")
    summary = await compact(compactor, session.id)
    hits = await search_covered(ledger, session.id, "walrus")
    assert {h.node_id for h in hits} == {t[0].id, t[1].id}
    assert {h.summary_id for h in hits} == {summary.id}
    assert "walrus" in hits[0].snippet.text
