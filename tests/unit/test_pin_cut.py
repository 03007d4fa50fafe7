"""Pins in the pure parts of compaction: the cut charges them first, a pinned half of a tool
pair brings the other, and both summarizers are told which covered turns stay verbatim."""
from dataclasses import replace

from service.context.budget import BudgetPolicy
from service.context.cut import find_cut, find_cut_index, verbatim_ids
from service.context.summarizers import OfflineExtractiveSummarizer
from service.llm.prompts import summary_prompt
from service.store import Rendered, Role
from tests.unit.test_cut_and_summarizer import history, node

U, A, T, S = Role.USER, Role.ASSISTANT, Role.TOOL, Role.SUMMARY


def test_pinned_turns_are_charged_before_the_tail():
    h = history(U, A, U, A, U, A)
    assert find_cut_index(h, 40) == 2
    # Two pinned turns before the tail take 20 of the 40: the tail keeps U A only.
    assert find_cut_index(h, 40, verbatim={"n0", "n1"}) == 4
    # A pinned turn inside the tail costs nothing more: the charge is 10, the tail 3 turns.
    assert find_cut_index(h, 40, verbatim={"n5"}) == 2
    # Pins alone over the budget: no tail fits.
    assert find_cut_index(h, 15, verbatim={"n0", "n1"}) == len(h)


def test_the_turns_kept_after_the_summary_are_never_a_cut():
    # [S, kept n1, n2 U, n3 A, n4 U, n5 A]: the uncovered turns start at 2.
    h = history(S, U, U, A, U, A)
    assert find_cut_index(h, 1000, lead=2, verbatim={"n1"}) == 2
    assert find_cut(h, 30, lead=2, verbatim={"n1"}).index == 4


def view(nodes, kept: int, pinned: set[str]) -> Rendered:
    root = node(99, Role.SYSTEM)
    return Rendered(nodes[-1].id, (root, *nodes), "n0" if nodes[0].role is S else None,
                    kept_count=kept, pinned_ids=frozenset(pinned))


def tool_pair(i: int):
    use = replace(node(i, A), blocks_json='[{"type": "tool_use", "id": "t%d", "name": "read",'
                  ' "input": {}}]' % i)
    answer = replace(node(i + 1, T), blocks_json='[{"type": "tool_result", "tool_use_id":'
                     ' "t%d", "content": [{"type": "text", "text": "ok"}], "is_error": false}]' % i)
    return use, answer


def test_a_pinned_half_of_a_tool_pair_brings_the_other():
    use, answer = tool_pair(2)
    nodes = [node(0, S), node(1, U), use, answer, node(4, A), node(5, U), node(6, A)]
    assert verbatim_ids(view(nodes, 0, {answer.id})) == {use.id, answer.id}
    assert verbatim_ids(view(nodes, 0, {use.id})) == {use.id, answer.id}
    # Covered turns kept after the summary stay verbatim whatever is pinned.
    assert verbatim_ids(view(nodes, 1, set())) == {"n1"}


async def test_the_summarizers_are_told_what_stays_verbatim():
    turns = history(U, A, U, A)
    offline = await OfflineExtractiveSummarizer().summarize(turns, None, verbatim={"n0", "x"})
    assert "(2 pinned turns stay verbatim after this summary.)" in offline.text
    assert "- user: turn 0." in offline.text  # a pinned turn keeps its line
    again = await OfflineExtractiveSummarizer().summarize(history(U, A), offline.text)
    assert "pinned" not in again.text  # the note is not relayed
    _, messages = summary_prompt(turns, "Earlier.", verbatim={"n0", "x"})
    text = messages[0]["content"]
    assert '<turn role="user" pinned="true">\nturn 0. more' in text
    assert 'the turns marked pinned="true" and 1 earlier turn of the summary so far' in text
    assert "pinned" not in summary_prompt(turns, None)[1][0]["content"]


def test_pins_may_hold_a_quarter_of_the_window():
    assert BudgetPolicy(200_000, 20_000).max_pinned_tokens == 50_000
