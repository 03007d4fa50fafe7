"""Small pieces shared by jars.py and process.py."""
from __future__ import annotations

import fcntl
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

PACKAGE_DIR = Path(__file__).resolve().parent


class Neo4jLaunchError(RuntimeError):
    """The managed local Neo4j could not be fetched, started or stopped."""


def require_executable(name: str, purpose: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise Neo4jLaunchError(
            f"`{name}` was not found on PATH; it is needed {purpose}. "
            "Install a JDK 17+ and Maven 3.8+, or set NEO4J_URI to use an existing Neo4j."
        )
    return path


@contextmanager
def exclusive_lock(
    path: Path, waiting: str | None = None, log: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Hold an flock on `path` (created if needed); released when the block ends
    or the process dies. Logs `waiting` once if another holder makes us wait."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting and log:
                log(waiting)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
