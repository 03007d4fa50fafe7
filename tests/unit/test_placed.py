"""nodes_import takes every node a row names by its place (service/store/backup.py:
placed): its index among the rows, or past them among the stored nodes the rows name."""
from service.store.backup import placed


def row(node_id, predecessor=None, covers=(), **properties):
    return {"properties": {"id": node_id, **properties}, "predecessor_id": predecessor,
            "caller_id": None, "covers": [{"node_id": c, "order": i} for i, c in enumerate(covers)]}


def test_rows_name_each_other_by_index_and_stored_nodes_past_them():
    rows = [row("a", "stored-1"), row("b", "a"),
            row("s", "b", covers=("a", "stored-2"), role="summary", covers_last_id="b",
                absorbed_id="stored-1")]
    out, referred = placed(rows)
    assert referred == ["stored-1", "stored-2"]  # each once, in the order first named
    assert [r["predecessor_at"] for r in out] == [3, 0, 1]
    assert [c["at"] for c in out[2]["covers"]] == [0, 4]
    assert (out[2]["covers_last_at"], out[2]["absorbed_at"], out[2]["replaced_at"]) == (1, 3, None)
    assert all(r["caller_at"] is None and r["carries_over"] == [] for r in out)
    assert rows[1]["predecessor_id"] == "a" and "predecessor_at" not in rows[1]  # not changed


def test_no_rows_place_nothing():
    assert placed([]) == ([], [])
