"""A part of a large file's import is checked with the session's other nodes outside it
(service/store/transcript_parts.py): the check looks up the few ids the part's rows name
and never lists them all, so a part costs the same in a session of any length, and it
finds what the check of a copy of them finds."""
from pathlib import Path

import pytest

from service.errors import BadInput
from service.model.validate import Limits
from service.store.backup import FORMAT, VERSION, check
from service.store.transcript_parts import _backup_session, _Others
from service.transcripts import streamed
from service.transcripts.model import Mode
from tests.transcript_trees import FIXTURES

LIMITS = Limits()
PART = 3


class Unlisted(_Others):
    """The outside nodes, which may be looked up but not listed."""

    def __iter__(self):
        raise AssertionError("the part's check listed every node of the session")

    def __len__(self):
        raise AssertionError("the part's check counted every node of the session")


def planned(name: str) -> streamed.Streamed:
    file = str(FIXTURES / "claude_code" / name)
    return streamed.read(file, "claude-code", "tenant", LIMITS, Mode(),
                         lambda f: Path(f).read_text(encoding="utf-8"))


def part_document(plan: streamed.Streamed, rows, media) -> dict:
    return {"format": FORMAT, "version": VERSION, "session": _backup_session(plan.header()),
            "nodes": rows, "media": media, "calls": [], "labels": [], "branch_names": [],
            "pins": []}


def own_ids(rows) -> set[str]:
    return {row["properties"]["id"] for row in rows}


@pytest.mark.parametrize("name", ["session.jsonl", "preserved.jsonl", "kept_after.jsonl"])
def test_each_part_is_checked_by_looking_up_the_nodes_outside_it(name):
    plan = planned(name)
    assert plan.size > PART
    for start in range(0, plan.size, PART):
        rows, media = plan.rows(start, start + PART)
        document = part_document(plan, rows, media)
        copied = {node_id: role for node_id, role in plan.roles.items()
                  if node_id not in own_ids(rows)}
        looked_up = check(document, LIMITS, Unlisted(plan.roles, own_ids(rows)))
        assert looked_up == check(document, LIMITS, copied)


def test_a_part_naming_a_node_of_no_part_or_a_turn_as_a_summary_is_refused():
    plan = planned("session.jsonl")
    rows, media = plan.rows(0, plan.size)
    (summary,) = [row for row in rows if row["properties"]["role"] == "summary"]
    place = rows.index(summary)
    turn = next(node_id for node_id, role in plan.roles.items()
                if role == "user" and node_id not in own_ids(rows[place:place + 1]))
    part = [{**summary, "predecessor_id": "nod_nowhere"}]
    with pytest.raises(BadInput, match="nod_nowhere"):
        check(part_document(plan, part, []), LIMITS, Unlisted(plan.roles, own_ids(part)))
    part = [{**summary, "properties": {**summary["properties"], "absorbed_id": turn}}]
    with pytest.raises(BadInput, match="is not a summary of this session"):
        check(part_document(plan, part, []), LIMITS, Unlisted(plan.roles, own_ids(part)))
    # A part holding a node the others hold too.
    part = rows[place:place + 1]
    with pytest.raises(BadInput, match="held twice"):
        check(part_document(plan, part, []), LIMITS, dict(plan.roles))
