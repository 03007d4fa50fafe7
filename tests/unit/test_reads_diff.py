"""diff_reads: the one comparison of two prompts (node ids in prompt order)."""
from service.store.calls import diff_reads


def test_added_dropped_kept_and_moved():
    diff = diff_reads(["root", "a", "b", "c", "d"], ["root", "s", "c", "b", "d", "e"])
    assert diff.added == ("s", "e")
    assert diff.dropped == ("a",)
    assert diff.kept == ("root", "c", "b", "d")
    assert diff.moved == ("c", "b")  # b and c swapped places among the kept nodes


def test_a_prompt_that_only_grows_moves_nothing():
    diff = diff_reads(["root", "a", "b"], ["root", "a", "b", "c"])
    assert (diff.added, diff.dropped, diff.moved) == (("c",), (), ())
