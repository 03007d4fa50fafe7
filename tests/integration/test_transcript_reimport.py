"""What a re-import of a transcript reads (docs/guides/importing-sessions.md): a file
holding exactly the text its session was last imported from is recognised without being
parsed; a grown one finds the stored nodes it maps otherwise by their mapping digests,
without reading the session's nodes back (but those written before digests were kept).
"""
import json
from pathlib import Path

import pytest

from service import transcripts
from service.transcripts import Mode
from service.transcripts.batch import import_text
from tests.integration.test_transcript_growth import _dump, _imported

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts" / "claude_code"
SESSION = FIXTURES / "session.jsonl"
STREAMED = FIXTURES / "streamed.jsonl"


def _unparsable(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the transcript was parsed")

    monkeypatch.setattr(transcripts.Reading, "feed", refuse)  # every read parses through it


def _statements(monkeypatch, db) -> list[str]:
    """The names of the statements `db` runs from now on."""
    names: list[str] = []
    for method in ("read", "read_on_leader", "write"):
        original = getattr(db, method)

        async def recorded(name, /, *args, _original=original, **params):
            names.append(name)
            return await _original(name, *args, **params)

        monkeypatch.setattr(db, method, recorded)
    return names


async def test_an_unchanged_file_is_recognised_without_parsing_it(ledger, monkeypatch):
    text = SESSION.read_text()
    first = await import_text(ledger, text, SESSION.name, None)
    _unparsable(monkeypatch)
    again = await import_text(ledger, text, SESSION.name, None)
    assert (again.session_id, again.created, again.written, again.changed) == \
        (first.session_id, False, 0, False)
    assert again.nodes == first.nodes


async def test_the_same_text_under_another_name_is_another_session(ledger):
    text = SESSION.read_text()
    first = await import_text(ledger, text, SESSION.name, None)
    other = await import_text(ledger, text, "copy.jsonl", None)
    assert other.created and other.session_id != first.session_id


async def test_a_file_that_gained_only_lines_mapping_to_nothing_is_then_recognised(
        ledger, monkeypatch):
    text = SESSION.read_text()
    last = json.loads(text.splitlines()[-1])
    progress = json.dumps({"type": "progress", "uuid": "p-late", "parentUuid": last["uuid"],
                           "sessionId": last["sessionId"], "timestamp": last["timestamp"]})
    grown = text + progress + "\n"
    await import_text(ledger, text, SESSION.name, None)
    assert (await import_text(ledger, grown, SESSION.name, None)).written == 0
    _unparsable(monkeypatch)
    assert (await import_text(ledger, grown, SESSION.name, None)).written == 0


async def test_a_degraded_read_is_read_again_and_lists_what_it_degraded(ledger):
    text = SESSION.read_text() + "not json\n"
    await import_text(ledger, text, SESSION.name, None, Mode())
    mode = Mode()
    again = await import_text(ledger, text, SESSION.name, None, mode)
    assert again.written == 0
    assert [d.kind for d in mode.degraded] == [transcripts.DegradedKind.MALFORMED_LINE]


async def test_a_grown_file_reads_no_stored_node_back(ledger, monkeypatch):
    lines = STREAMED.read_text().splitlines(keepends=True)
    await import_text(ledger, "".join(lines[:len(lines) // 2]), STREAMED.name, None)
    names = _statements(monkeypatch, ledger.db)
    grown = await import_text(ledger, "".join(lines), STREAMED.name, None)
    assert grown.written > 0
    assert "transcript_held" not in names


@pytest.mark.parametrize("cut", range(1, len(STREAMED.read_text().splitlines())))
async def test_nodes_stored_before_digests_are_compared_as_read_back(db, events, cut,
                                                                     monkeypatch):
    """A session imported before nodes kept their mapping digest grows as it did."""
    lines = STREAMED.read_text().splitlines(keepends=True)
    whole, whole_id = await _imported(db, events, "whole", "".join(lines), STREAMED.name)
    ledger, session_id = await _imported(db, events, "cut", "".join(lines[:cut]),
                                         STREAMED.name)
    await db.driver.execute_query(
        "MATCH (n:Node {session_id: $sid}) REMOVE n.source_digest "
        "WITH DISTINCT n.session_id AS sid MATCH (s:Session {id: sid}) "
        "REMOVE s.source_bytes, s.source_prefix_sha256", sid=session_id)
    names = _statements(monkeypatch, db)
    await import_text(ledger, "".join(lines), STREAMED.name, None)
    assert "transcript_held" in names
    dump, expected = await _dump(ledger, session_id), await _dump(whole, whole_id)
    for part in expected:
        assert dump[part] == expected[part], f"{part}, cut after line {cut}"
