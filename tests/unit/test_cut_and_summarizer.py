"""find_cut_index and the offline summarizer: pure functions, no database."""
from datetime import datetime, timezone

import pytest

from service.context.budget import BudgetPolicy
from service.context.cut import find_cut_index
from service.context.summarizers import HEADER, OfflineExtractiveSummarizer
from service.errors import BadInput
from service.store import Node, Role


def node(i: int, role: Role, tokens: int = 10, content: str | None = None) -> Node:
    return Node(id=f"n{i}", session_id="s", role=role, content=content or f"turn {i}. more",
                created_at=datetime.now(timezone.utc), tokens=tokens, metadata={}, seq=i,
                depth=i, predecessor_id=None, caller_id=None, side_branch=False,
                deleted_at=None)


def history(*roles: Role, tokens: int = 10) -> list[Node]:
    return [node(i, r, tokens) for i, r in enumerate(roles)]


U, A, T, S = Role.USER, Role.ASSISTANT, Role.TOOL, Role.SUMMARY


def test_the_tail_fits_and_opens_on_a_user_turn():
    h = history(U, A, U, A, U, A)
    assert find_cut_index(h, 20) == 4  # keeps U A
    assert find_cut_index(h, 30) == 4  # A U A would fit; moved forward to the user turn
    assert find_cut_index(h, 40) == 2


def test_everything_fits_means_nothing_to_cover():
    assert find_cut_index(history(U, A, U, A), 40) == 0
    assert find_cut_index(history(U, A, U, A), 1000) == 0


def test_the_previous_summary_always_lands_on_the_covered_side():
    h = history(S, A, U, A, T, A)
    assert find_cut_index(h, 50) == 2  # S A are covered though the tail had room for A
    h = history(S, U, A)
    assert find_cut_index(h, 20) == 1


def test_the_previous_summary_is_covered_even_when_every_turn_after_it_fits():
    # The view [S9, a11, u13, a13]: S and the reply before the first user turn are covered.
    assert find_cut_index(history(S, A, U, A), 1000) == 2
    assert find_cut_index(history(S, A, T, A, U, A), 1000) == 4
    # The first turn after S opens a tail that fits: only S is covered, nothing new.
    assert find_cut_index(history(S, U, A, U, A), 1000) == 1
    # No user turn after S to open a tail: everything is covered.
    assert find_cut_index(history(S, A, T, A), 1000) == 4


def test_no_user_turn_to_open_the_tail_covers_everything():
    assert find_cut_index(history(U, A, T, A), 20) == 4


def test_a_tail_turn_larger_than_the_budget_is_covered():
    h = [node(0, U), node(1, A), node(2, U), node(3, A, tokens=500)]
    assert find_cut_index(h, 100) == 4


def test_budget_policy_threshold_and_validation():
    policy = BudgetPolicy(context_window=1000, keep_recent_tokens=200)
    assert policy.auto_compact_at == 800
    assert not policy.needs_compaction(799) and policy.needs_compaction(800)
    assert BudgetPolicy().keep_recent_tokens == 20_000
    with pytest.raises(BadInput):
        BudgetPolicy(auto_compact_ratio=1.5)
    with pytest.raises(BadInput, match="never"):
        BudgetPolicy(context_window=1000)  # keeps 20,000 of a 1,000-token window


async def test_offline_summary_keeps_each_turn_opening_and_relays_the_previous():
    summarizer = OfflineExtractiveSummarizer()
    first = await summarizer.summarize(
        [node(0, U, content="Plan a trip to Rome. I like museums."),
         node(1, A, content="Sure! Three days would work.")], None)
    assert first.summarizer == "offline-extractive"
    assert first.text.splitlines() == [HEADER, "- user: Plan a trip to Rome.", "- assistant: Sure!"]
    second = await summarizer.summarize([node(2, U, content="Add Florence.")], first.text)
    assert second.text.splitlines()[1:] == [
        "- user: Plan a trip to Rome.", "- assistant: Sure!", "- user: Add Florence."]
    assert (await summarizer.summarize([node(2, U, content="Add Florence.")], first.text)) == second


async def test_offline_summary_stays_bounded_and_says_what_it_folded():
    summarizer = OfflineExtractiveSummarizer(max_lines=3)
    text = (await summarizer.summarize([node(i, U) for i in range(5)], None)).text
    assert text.splitlines()[1] == "(2 earlier turns folded away.)"
    again = (await summarizer.summarize([node(9, A)], text)).text
    assert again.splitlines()[1] == "(3 earlier turns folded away.)"
    assert len(again.splitlines()) == 2 + 3


async def test_a_foreign_previous_summary_is_relayed_too():
    summarizer = OfflineExtractiveSummarizer()
    text = (await summarizer.summarize([node(1, U)], "Written by another model.\nTwo lines.")).text
    assert "- earlier summary: Written by another model." in text
    assert "- earlier summary: Two lines." in text


async def test_offline_summarizer_says_it_ignored_focus_instructions():
    from service.context.summarizers import IGNORED_INSTRUCTIONS

    summarizer = OfflineExtractiveSummarizer()
    turns = [node(0, U, content="Plan the trip. Details."), node(1, A, content="Sure. More.")]
    plain = (await summarizer.summarize(turns, None)).text
    focused = (await summarizer.summarize(turns, None, instructions="Only Rome.")).text
    assert IGNORED_INSTRUCTIONS not in plain
    assert focused.splitlines() == [HEADER, IGNORED_INSTRUCTIONS, *plain.splitlines()[1:]]
    assert "ignored by the offline summarizer" in focused and "Only Rome." not in focused
    # The note is not relayed as an earlier summary line.
    again = (await summarizer.summarize([node(2, U, content="Add Florence.")], focused)).text
    assert IGNORED_INSTRUCTIONS not in again and "Plan the trip." in again
