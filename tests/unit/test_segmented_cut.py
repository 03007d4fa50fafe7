"""The segmented strategy in the pure parts of compaction: the uncovered turns start after
the last stand-in and its pinned turns, and only those (and pins after them) are charged."""
from service.context.cut import find_cut, verbatim_ids
from service.store import Rendered, Role
from tests.unit.test_cut_and_summarizer import history, node

U, A, S = Role.USER, Role.ASSISTANT, Role.SUMMARY


def segmented(nodes, last: str, kept: int, pinned: set[str], stand_ins) -> Rendered:
    return Rendered(nodes[-1].id, (node(99, Role.SYSTEM), *nodes), last, "segmented",
                    kept_count=kept, pinned_ids=frozenset(pinned), stand_in_ids=stand_ins)


def test_the_cut_starts_after_the_last_stand_in_and_its_pins():
    # [S n0, pinned n1 (S's), S n2, pinned n3 (n2's), n4 U, n5 A, n6 U, n7 A, n8 U, n9 A]
    h = history(S, U, S, A, U, A, U, A, U, A)
    view = segmented(h, "n2", 1, {"n1", "n3"}, ("n0", "n2"))
    assert (view.last_stand_in, view.lead) == (2, 4)
    # The first stand-in's pin is no part of the cut; the last one's is charged first.
    assert verbatim_ids(view) == {"n3"}
    cut = find_cut(view.history, 30, lead=view.lead, verbatim=verbatim_ids(view))
    assert cut.index == 8  # n3 (10) + n8 n9 (20): the tail opens on n8


def test_without_a_stand_in_the_view_is_all_turns():
    h = history(U, A, U, A)
    view = segmented(h, None, 0, set(), ())
    assert (view.last_stand_in, view.lead) == (0, 0)
