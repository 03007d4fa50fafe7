"""A Reading fed a file's lines in two parts builds what a read of the whole file builds
(service/transcripts/reading.py), for every fixture and every line it could be cut at,
while parsing only the lines the second part adds; the sub-agent files beside a Claude
Code session the same as they grow."""
import json
from pathlib import Path

import pytest

from service.model.validate import Limits
from service.transcripts import codex, jsonl, read, reading_of
from service.transcripts.follow import without_open_tail
from service.transcripts.model import Mode, NoTurns

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
FILES = sorted(p for p in FIXTURES.rglob("*.jsonl") if "subagents" not in p.parts)
AGENTS = FIXTURES / "claude_code" / "agents"


def _document(reading, mode, settle=None, agents=None):
    try:
        return reading.document(mode, agents, settle)
    except NoTurns:
        return None


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_a_reading_fed_a_cut_file_then_the_rest_builds_the_whole_files_document(path):
    lines = path.read_text().splitlines(keepends=True)
    whole_mode = Mode()
    whole = read("".join(lines), path.name, None, "t", Limits(), mode=whole_mode)
    whole.pop("content")
    for cut in range(1, len(lines)):
        reading = reading_of("".join(lines[:cut]), path.name, None, "t", Limits())
        _document(reading, Mode(), lambda t: without_open_tail(t, False))  # as follow does
        _document(reading, Mode())
        parsed = reading.parsed
        reading.feed("".join(lines[cut:]))
        mode = Mode()
        grown = reading.document(mode)
        assert grown == {k: v for k, v in whole.items() if k != "content"} | {
            "session": {**whole["session"], "properties": {
                k: v for k, v in whole["session"]["properties"].items()
                if not k.startswith("source_") or k == "source_file"}}}, f"cut after line {cut}"
        assert sorted(mode.degraded, key=lambda d: (d.file, d.line)) == \
            sorted(whole_mode.degraded, key=lambda d: (d.file, d.line))
        assert reading.parsed - parsed == sum(bool(line.strip()) for line in lines[cut:])


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_a_reading_fed_line_by_line_builds_the_document_a_fresh_read_of_each_prefix_builds(path):
    """As a follower reads a file its tool writes: each document a Reading gives after
    the lines it gained (laid out by extending its last layout where only turns were
    added after the others, document._Layout.grown) is the one a fresh read gives."""
    lines = path.read_text().splitlines(keepends=True)
    extended = 0
    for settle in (lambda t: without_open_tail(t, False), None):
        reading = None
        for cut in range(1, len(lines) + 1):
            text = "".join(lines[:cut])
            if reading is None:
                reading = reading_of(text, path.name, None, "t", Limits())
            else:
                reading.feed(lines[cut - 1])
            mode, fresh_mode = Mode(), Mode()
            got = _document(reading, mode, settle)
            want = _document(reading_of(text, path.name, None, "t", Limits()), fresh_mode,
                             settle)
            assert got == want, f"after line {cut}"
            assert mode.degraded == fresh_mode.degraded, f"after line {cut}"
            extended += got is not None and reading.memo.layout.base is not None
    assert extended >= len(lines) // 4  # most growths only add turns after the others


GROWN = [FIXTURES / "claude_code" / "session.jsonl",
         FIXTURES / "codex" / "rollout-2026-02-20T09-00-00-019c7a10-desktop.jsonl"]


@pytest.mark.parametrize("path", GROWN, ids=[p.parent.name for p in GROWN])
def test_a_grown_file_maps_again_only_the_turns_its_new_lines_change(path):
    lines = path.read_text().splitlines(keepends=True)
    reading = reading_of("".join(lines[:-1]), path.name, None, "t", Limits())
    first = reading.document(Mode())
    built = reading.memo.built
    assert built == len(_turns(first))  # every turn
    reading.feed(lines[-1])
    grown = reading.document(Mode())
    assert 1 <= reading.memo.built - built == len(_turns(grown)) - len(_turns(first))


CODEX = sorted((FIXTURES / "codex").glob("*.jsonl"))


@pytest.mark.parametrize("path", CODEX, ids=[p.name for p in CODEX])
def test_a_codex_parse_read_on_line_by_line_is_the_parse_of_each_prefix(path):
    """codex.Parsing's transcript gives up on the calls still awaited (as the end of the
    file does) without changing what it read: the lines held for them are placed again
    when their outputs arrive. A turn no line changed since keeps its Turn (but those the
    end of the file gives up on, made again while calls are awaited)."""
    lines = path.read_text().splitlines(keepends=True)
    parsing = codex.Parsing(path.name, Mode())
    before = None
    for number, line in enumerate(lines, start=1):
        parsing.take(number, json.loads(line))
        whole = _parse(codex.parse, "".join(lines[:number]), path.name)
        read_on = _parse(lambda *_: parsing.transcript(), "", "")
        assert read_on == whole, f"after line {number}"
        awaiting = bool(parsing.reader.held or parsing.reader._awaited())
        if before is not None and read_on is not None and not awaiting:
            kept = {turn.key: turn for turn in before.turns}
            for turn in read_on.turns:
                if kept.get(turn.key) == turn:
                    assert kept[turn.key] is turn, f"after line {number}: {turn.key} made again"
        before = None if awaiting else read_on or before


def _parse(parse, text, file):
    try:
        return parse(text, file, Mode())
    except NoTurns:
        return None


def test_sub_agent_files_are_parsed_on_from_where_they_stopped():
    session = AGENTS / "5c1d9e20-agents.jsonl"
    side = AGENTS / "5c1d9e20-agents" / "subagents"
    texts = {str(p): p.read_text() for p in side.iterdir()}
    agent = str(side / "agent-a1b2.jsonl")
    whole = read(session.read_text(), str(session), None, "t", Limits(), texts.__getitem__)
    agent_lines = texts[agent].splitlines(keepends=True)
    reading = reading_of(session.read_text(), str(session), None, "t", Limits())
    for cut in range(1, len(agent_lines) + 1):
        cut_texts = {**texts, agent: "".join(agent_lines[:cut])}
        parsed = reading.parsed
        document = _document(reading, Mode(), agents=_agents(reading, cut_texts))
        if cut > 1:
            assert reading.parsed - parsed == 1  # the agent's new line only
        if cut == len(agent_lines):
            whole.pop("content")
            fingerprinted = whole["session"]["properties"]
            assert document["nodes"] == whole["nodes"]
            assert document["session"]["properties"] == {
                k: v for k, v in fingerprinted.items()
                if not k.startswith("source_") or k == "source_file"}


def _agents(reading, texts):
    from service.transcripts import beside
    return beside(reading.file, reading.tool, texts.__getitem__).agents


def _turns(document):
    return [n for n in document["nodes"] if n["properties"]["role"] not in ("system", "summary")]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_a_reading_kept_on_disk_reads_on_as_the_one_kept(path, tmp_path, monkeypatch):
    """kept.py: a Reading pickled after its document and loaded in another import reads
    the rest of the file into the whole file's document (its sub-agents' files too)."""
    from service.transcripts import document_of, kept
    monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)
    side = path.parent / path.stem / "subagents"
    texts = {str(p): p.read_text() for p in side.iterdir()} if side.exists() else {}
    lines = path.read_text().splitlines(keepends=True)
    whole = read("".join(lines), str(path), None, "t", Limits(), texts.__getitem__)
    shelf = kept.Shelf(tmp_path, "store", "t", Limits())
    for cut in range(1, len(lines)):
        text = "".join(lines[:cut])
        reading = reading_of(text, str(path), None, "t", Limits())
        try:
            document_of(reading, text, texts.__getitem__, Mode())
        except NoTurns:
            continue
        shelf.keep(str(path), False, kept.kept_of(reading, None, text))
        taken = shelf.take(str(path), False, "".join(lines))
        assert taken is not None and taken[0].reading is not reading, f"cut after line {cut}"
        kept_reading, gained = taken[0].reading, taken[1]
        assert gained == "".join(lines[cut:])
        parsed = kept_reading.parsed
        kept_reading.feed(gained)
        assert kept_reading.parsed - parsed == sum(bool(line.strip()) for line in lines[cut:])
        assert document_of(kept_reading, "".join(lines), texts.__getitem__, Mode()) == whole, \
            f"cut after line {cut}"
    # Another file's text, or this one's rewritten: nothing taken, and the reading let go.
    assert shelf.take(str(path), False, "{}\n" + "".join(lines)) is None
    assert list(tmp_path.iterdir()) == []


def test_a_reading_that_cannot_be_kept_leaves_nothing_behind(tmp_path, monkeypatch):
    """kept.py: a disk full while a reading is written leaves no part of it on the shelf."""
    from service.transcripts import kept
    shelf = kept.Shelf(tmp_path, "store", "t", Limits())

    def full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(kept.os, "replace", full)
    shelf.put("session.jsonl", False, b"a reading")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_a_long_text_fed_a_part_at_a_time_reads_as_it_does_at_once(path, monkeypatch):
    """Reading.feed reads a long text in parts (jsonl.text_parts), so that it holds one
    part's objects at a time: with parts of a few lines each, the same document, the same
    lines counted and the same entries degraded."""
    text = path.read_text()
    read_as = {}
    for characters in (1 << 20, 200):
        monkeypatch.setattr(jsonl, "PART_CHARACTERS", characters)
        mode = Mode()
        reading = reading_of(text, path.name, None, "t", Limits())
        read_as[characters] = (reading.document(mode), reading.lines, mode.degraded)
    assert len(list(jsonl.text_parts(text))) > 1
    assert read_as[200] == read_as[1 << 20]
