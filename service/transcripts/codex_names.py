"""The names Codex gives its threads, kept beside their rollouts.

Codex appends `{"id", "thread_name", "updated_at"}` to `session_index.jsonl` in its home
(the folder holding `sessions/YYYY/MM/DD/rollout-<ts>-<thread id>.jsonl` and
`archived_sessions/`) whenever a thread is named, by the user or by Codex itself; the
newest entry naming a thread is its name, and a line that is not such an entry is passed
over, as Codex passes it over. Some versions also write the name into the rollout, as an
`event_msg` of type `thread_name_updated` (origin.codex reads that one). A rollout
anywhere else, or given as text, has no index.
"""
from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Callable

from ..errors import CtxdagError
from .origin import whole

INDEX = "session_index.jsonl"
_ROLLOUT = re.compile(r"rollout-.+-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
                      r"\.jsonl", re.IGNORECASE)
# The index last read, by its path, size and modification time: a folder's rollouts are
# named from one read of it. Each thread's name, and when it was given (Unix time).
_last: tuple[tuple[str, int, int], dict[str, tuple[str, float]]] | None = None


def index_of(file: str) -> Path | None:
    """The thread index of the Codex home rollout `file` is in; None when it is in none."""
    path = Path(file)
    if file == "-" or _ROLLOUT.fullmatch(path.name) is None:
        return None
    parents = path.parents
    if len(parents) > 1 and parents[0].name == "archived_sessions":
        return parents[1] / INDEX
    if len(parents) > 4 and parents[3].name == "sessions" \
            and all(p.name.isdigit() for p in parents[:3]):
        return parents[4] / INDEX
    return None


def name_of(file: str, read_text: Callable[[str], str] | None) -> str | None:
    """The name Codex's index gives the thread of rollout `file`; None when it names none
    (or `read_text` is None: the file was given as text)."""
    index = index_of(file) if read_text is not None else None
    if index is None:
        return None
    named = _named(index, file, read_text)
    return None if named is None else named[0]


def named_at(file: str, read_text: Callable[[str], str]) -> float | None:
    """When the index last named the thread of rollout `file` (Unix time: the entry's
    `updated_at`, else when the index was last written); None when it names it not."""
    index = index_of(file)
    named = None if index is None else _named(index, file, read_text)
    return None if named is None else named[1]


def _named(index: Path, file: str, read_text: Callable[[str], str]) -> tuple[str, float] | None:
    match = _ROLLOUT.fullmatch(Path(file).name)
    assert match is not None
    return _names(index, read_text).get(match.group(1).lower())


def _names(index: Path, read_text: Callable[[str], str]) -> dict[str, tuple[str, float]]:
    global _last
    try:
        stat = index.stat()
    except OSError:
        return {}  # no thread was ever named
    key = (str(index), stat.st_size, stat.st_mtime_ns)
    if _last is not None and _last[0] == key:
        return _last[1]
    try:
        text = read_text(str(index))
    except (OSError, ValueError, CtxdagError):
        return {}  # unreadable: the threads keep the titles their prompts give them
    names: dict[str, tuple[str, float]] = {}
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict):
            continue
        thread, name = entry.get("id"), entry.get("thread_name")
        if isinstance(thread, str) and isinstance(name, str) and name.strip() \
                and whole(name) == name:  # no lone surrogate: Codex's reader refuses one
            names[thread.lower()] = (name.strip(), _time(entry.get("updated_at"), stat.st_mtime))
    _last = (key, names)
    return names


def _time(value: object, otherwise: float) -> float:
    """An RFC 3339 time as Unix time; `otherwise` when it is none."""
    try:
        at = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        at = None
    return otherwise if at is None or at.tzinfo is None else at.timestamp()
