"""Which stored nodes a grown transcript replaces (service/store/transcripts.py): the
stored tails, merged where one lies below another, split into the nodes the file still
holds (written again) and those it no longer holds (tombstoned)."""
import json

from service.store.transcripts import stale_tails

IMPORTED = json.dumps({"source": {"tool": "codex", "entries": ["x"]}})


def _row(node_id: str, predecessor: str, top: str, metadata: str = IMPORTED) -> dict:
    return {"id": node_id, "predecessor_id": predecessor, "top_id": top, "metadata": metadata}


def test_a_turn_the_file_re_hangs_below_a_result_is_written_again_not_tombstoned():
    # assistant A's cancelled result S is gone; U, placed below S, now hangs below the real
    # result and is remapped (a tail of its own, below S's).
    rows = [_row("S", "A", "S"), _row("U", "S", "S"), _row("U", "S", "U"),
            _row("B", "U", "U")]
    replaced, rewritten = stale_tails(rows, named={"A", "U", "B", "R"})
    assert rewritten == ["B", "U"]
    assert replaced == [{"fork_point_id": "A", "tip_id": "S", "ids": ["S"]}]


def test_a_remapped_node_alone_is_written_again_and_announces_no_deleted_branch():
    replaced, rewritten = stale_tails([_row("SUM", "ROOT", "SUM")], named={"SUM"})
    assert (replaced, rewritten) == ([], ["SUM"])


def test_a_tail_the_session_went_on_from_in_ctxdag_stays():
    rows = [_row("S", "A", "S"), _row("N", "S", "S", json.dumps({}))]
    assert stale_tails(rows, named={"A"}) == ([], [])
