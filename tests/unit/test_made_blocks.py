"""A transcript's document notes the blocks it made (store/records.py: made_blocks), so
its check does not parse them again: what it noted must be exactly what parsing the
stored text gives, for every block kind the fixtures hold."""
from pathlib import Path

import pytest

from service import transcripts
from service.model import validate
from service.model.validate import Limits
from service.store import backup, records
from service.store.transcripts import CONTENT, UNLABELED

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
FILES = sorted(p for p in FIXTURES.rglob("*.jsonl") if "subagents" not in p.parts)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_noted_blocks_are_what_parsing_their_stored_text_gives(path):
    limits = Limits()
    records.forget_checked_blocks()  # what reads before this test noted and never checked
    document = transcripts.read(path.read_text(), str(path), None, "t", limits)
    noted = dict(records._made)
    try:
        stored = [n["properties"]["blocks"] for n in document["nodes"]
                  if "blocks" in n["properties"]]
        made = {value for value, _, _ in noted}
        # All but those naming media (their stored form is not what was parsed).
        assert made <= set(stored)
        assert {value for value in stored if '"sha256"' not in value} <= made
        for (value, role, at), made in noted.items():
            assert at == limits
            assert made == records._parsed_blocks(value, role, limits, "blocks"), value
        # The check takes them as noted and passes, and forgets them after.
        backup.check({k: v for k, v in document.items() if k not in (CONTENT, UNLABELED)},
                     limits)
        assert records._made == {}
    finally:
        records.forget_checked_blocks()


def test_blocks_noted_as_made_are_not_parsed_again(monkeypatch):
    path = FIXTURES / "claude_code" / "session.jsonl"
    limits = Limits()
    records.forget_checked_blocks()  # what reads before this test noted and never checked
    document = transcripts.read(path.read_text(), str(path), None, "t", limits)
    assert records._made
    parsed = []
    real = records.blocks.parse

    def counted(*args, **kwargs):
        parsed.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(records.blocks, "parse", counted)
    backup.check({k: v for k, v in document.items() if k not in (CONTENT, UNLABELED)}, limits)
    assert parsed == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_noted_metadata_is_what_the_rule_for_stored_objects_takes(path):
    """Every node's metadata a reader noted as made passes the stored-object rule it then
    skips, and the check forgets them after."""
    limits = Limits()
    records.forget_checked_blocks()  # what reads before this test noted and never checked
    document = transcripts.read(path.read_text(), str(path), None, "t", limits)
    try:
        noted = set(records._made_objects)
        assert noted, "the reader notes its nodes' metadata"
        stored = {n["properties"]["metadata"] for n in document["nodes"]}
        for value, at in noted:
            assert at == limits and value in stored
            validate.stored_json_object(value, limits, "metadata")
        backup.check({k: v for k, v in document.items() if k not in (CONTENT, UNLABELED)},
                     limits)
        assert records._made_objects == set()
    finally:
        records.forget_checked_blocks()


def test_metadata_noted_as_made_is_not_parsed_again(monkeypatch):
    limits = Limits()
    text = records.made_json_object({"source": {"tool": "pi"}}, limits, "metadata")
    parsed = []
    monkeypatch.setattr(validate, "stored_json_object",
                        lambda *args: parsed.append(args) or {})
    try:
        assert records.node_problems({"metadata": text}, limits) is not None
        assert not [args for args in parsed if args[0] == text]
        records.forget_checked_blocks()
        records.node_problems({"metadata": text}, limits)
        assert [args for args in parsed if args[0] == text]
    finally:
        records.forget_checked_blocks()
