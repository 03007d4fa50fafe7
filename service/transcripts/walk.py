"""The transcript files `ctxdag import-transcript` takes from the paths it is given: a file
as named, a folder walked in any of the tools' layouts.

Claude Code keeps `~/.claude/projects/<project>/<session>.jsonl` with its sub-agents in
`<session>/subagents/` (read with their session: subagents.py); Pi keeps
`~/.pi/agent/sessions/<cwd>/<ts>_<id>.jsonl`; Codex `~/.codex/sessions/YYYY/MM/DD/
rollout-….jsonl`. So a folder's `*.jsonl` files at any depth are its transcripts, in path
order, but for the files under a `subagents` folder and the sub-agent files an older Claude
Code kept beside its sessions (`agent-….jsonl`, compaction helpers included), which are no
sessions of their own, and Codex's index of its threads' names (codex_names.py), read with
its rollouts. Which tool wrote a file its first line says (`detect`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInput
from ..model.validate import moment
from . import codex_names
from .codex_names import INDEX
from .subagents import PREFIX

SUFFIX = ".jsonl"
SIDE_FOLDER = "subagents"


@dataclass(frozen=True)
class Found:
    """The files to import (named ones first as named, then each folder's) and how many a
    folder held that are not sessions of their own, or older than `since`."""

    files: list[str]
    side_files: int = 0
    older: int = 0


def since(text: str) -> float:
    """`--since`'s DATE (ISO 8601; local time unless it names a zone) as a Unix time."""
    return moment(text, "--since").timestamp()


def transcript_files(paths: list[str], after: float | None = None) -> Found:
    """Each file once, however often the paths name it (a file and its folder, a folder
    and its parent, `./x` and `x`, a link to it), where it is first named, and by its
    absolute path: a session keeps the path of its source, which names it from anywhere."""
    files, older = [], 0
    seen: set[str] = set()
    sides: set[str] = set()  # side files are no sessions, unless named
    for named in paths:
        named = named if named == "-" else os.path.abspath(named)
        path = Path(named)
        if named == "-" or not path.is_dir():
            found = [(named, False)]  # a file named is taken, a side file too
        else:
            found = [(str(file), side_file(file.relative_to(path)))
                     for file in sorted(path.rglob(f"*{SUFFIX}"))
                     if file.is_file() and not _codex_index(file)]
        for file, side in found:
            real = file if file == "-" else os.path.realpath(file)
            if side:
                sides.add(real)
                continue
            if real in seen:
                continue
            seen.add(real)
            if after is not None and file != "-" and Path(file).exists() \
                    and changed_at(Path(file)) < after:
                older += 1
            else:
                files.append(file)
    return Found(files, len(sides - seen), older)


def named_in_text(file: str) -> None:
    """BadInput when the file's path is not UTF-8 (a name its system holds as bytes): a
    session keeps the path of its source as text, and a follower or the next import must
    find the file by it."""
    try:
        file.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(file).decode("utf-8", "backslashreplace")
        raise BadInput(f"{shown}: the path is not UTF-8, and a session keeps its source's "
                       "path as text: rename the file (or its folder) and import it again",
                       file=shown) from None


def side_file(relative: Path) -> bool:
    return SIDE_FOLDER in relative.parts[:-1] or relative.name.startswith(PREFIX)


def _codex_index(file: Path) -> bool:
    return file.name == INDEX and (file.parent / "sessions").is_dir()


def changed_at(file: Path) -> float:
    """When a session file last changed: it; for Claude Code, its sub-agents' files; for
    Codex, its thread's name in the index beside it (a thread renamed has a new title)."""
    times = [file.stat().st_mtime]
    side = file.with_suffix("") / SIDE_FOLDER
    if side.is_dir():
        times += [p.stat().st_mtime for p in side.glob(f"*{SUFFIX}")]
    named = codex_names.named_at(str(file), _utf8_text)
    if named is not None:
        times.append(named)
    return max(times)


def _utf8_text(file: str) -> str:
    return Path(file).read_bytes().decode("utf-8")  # ValueError when it is not UTF-8
