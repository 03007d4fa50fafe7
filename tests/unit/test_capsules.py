"""The folding rule for drawings (service/store/capsules.py), on hand-made graph rows."""
from service.store.capsules import Placement, fold
from service.store.views import GraphRow


def row(id, pred, seq, covers=None, relic=False, role="user"):
    return GraphRow(id, role, seq, pred, None, False, relic,
                    None if covers is None else tuple(covers))


def test_a_capsule_folds_exactly_its_covers_ids_and_the_kept_turn_hangs_from_it():
    rows = [row("R", None, 0, role="system"), row("a", "R", 1), row("b", "a", 2),
            row("t", "a", 3), row("c", "b", 4), row("S", "R", 5, covers=["a", "t", "b"],
                                                    role="summary"),
            row("old", "R", 6, relic=True, role="summary")]
    placed = fold(rows)
    assert {i for i, p in placed.items() if p.folded_into == "S"} == {"a", "t", "b"}
    assert placed["c"] == Placement(None, "S")  # the first turn kept below the segment
    assert placed["S"] == placed["old"] == Placement(None, "R")  # a relic folds nothing
    assert placed["R"] == Placement(None, None)


def test_a_fork_off_a_covered_turn_hangs_from_the_capsule():
    rows = [row("R", None, 0), row("a", "R", 1), row("b", "a", 2), row("c", "b", 3),
            row("S", "R", 4, covers=["a", "b"]), row("x", "a", 5), row("y", "x", 6)]
    placed = fold(rows)
    assert placed["x"] == Placement(None, "S") and placed["y"] == Placement(None, "x")


def test_of_several_capsules_a_row_folds_into_the_innermost_and_newest():
    # Branch strategy: S1 covers a b on one branch, S2 covers a b x on a fork after b,
    # S3 covers a b too (written later than S1).
    rows = [row("R", None, 0), row("a", "R", 1), row("b", "a", 2), row("c", "b", 3),
            row("x", "b", 4), row("y", "x", 5), row("S1", "R", 6, covers=["a", "b"]),
            row("S2", "R", 7, covers=["a", "b", "x"]), row("S3", "R", 8, covers=["a", "b"])]
    placed = fold(rows)
    assert placed["a"].folded_into == placed["b"].folded_into == "S3"
    assert placed["x"].folded_into == "S2"
    assert placed["c"] == Placement(None, "S3") and placed["y"] == Placement(None, "S2")


def test_without_capsules_every_row_hangs_from_its_predecessor():
    rows = [row("R", None, 0), row("a", "R", 1), row("S", "R", 2, relic=True)]
    assert fold(rows) == {"R": Placement(None, None), "a": Placement(None, "R"),
                          "S": Placement(None, "R")}
