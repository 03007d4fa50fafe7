"""The files `import-transcript` takes from folders laid out as the tools lay them out, and
its progress line (no database)."""
import io
import os

import pytest

from service.errors import BadInput
from service.transcripts.progress import Progress
from service.transcripts.walk import since, transcript_files
from tests.transcript_trees import SESSIONS, SIDE_FILES, tool_homes


def test_a_folder_holds_the_sessions_but_no_sub_agent_files(tmp_path):
    homes = tool_homes(tmp_path)
    found = transcript_files([str(tmp_path)])
    assert (len(found.files), found.side_files, found.older) == (SESSIONS, SIDE_FILES, 0)
    assert found.files == sorted(found.files)
    assert not any("subagents" in f or os.path.basename(f).startswith("agent-")
                   for f in found.files)
    codex = sorted(str(p) for p in homes["codex"].rglob("rollout-*.jsonl"))
    assert transcript_files([str(homes["codex"])]).files == codex


def test_a_named_file_is_taken_as_named_and_since_goes_by_mtime(tmp_path):
    homes = tool_homes(tmp_path)
    named = homes["claude-code"] / "-work-app" / "agent-c3d4.jsonl"
    assert transcript_files([str(named), "-"]).files == [str(named), "-"]
    for file in tmp_path.rglob("*.jsonl"):
        os.utime(file, (1_700_000_000, 1_700_000_000))  # November 2023
    found = transcript_files([str(tmp_path), str(named)], since("2024-01-01"))
    assert (found.files, found.older) == ([], SESSIONS + 1)
    assert len(transcript_files([str(tmp_path)], since("2023-01-01T00:00+00:00")).files) \
        == SESSIONS
    with pytest.raises(BadInput, match="--since must be an ISO 8601 date"):
        since("yesterday")


def test_each_file_once_however_often_the_paths_name_it(tmp_path, monkeypatch):
    homes = tool_homes(tmp_path)
    everything = transcript_files([str(tmp_path)]).files
    one = everything[0]
    (tmp_path / "link.jsonl").symlink_to(one)
    monkeypatch.chdir(tmp_path)
    codex = [str(p) for p in sorted(homes["codex"].rglob("rollout-*.jsonl"))]
    found = transcript_files([one, os.path.relpath(one), str(homes["codex"]), str(tmp_path),
                              str(tmp_path), "link.jsonl"])
    first = [one] + [f for f in codex if f != one]
    assert found.files == first + [f for f in everything if f not in first]
    assert found.side_files == SIDE_FILES


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_on_a_terminal_only():
    clock = iter([0.0, 10.0, 10.0]).__next__
    terminal = Terminal()
    progress = Progress(terminal, files=4, size=1000, clock=clock)
    progress.advance(250, 500)
    assert terminal.getvalue() == ("\r[######..................] 1/4 files, 500 entries, "
                                   "50 entries/s, 0:30 left\x1b[K")
    progress.clear()
    assert terminal.getvalue().endswith("\r\x1b[K")
    piped = io.StringIO()
    progress = Progress(piped, files=4, size=1000)
    progress.advance(250, 500)
    progress.clear()
    assert piped.getvalue() == ""
