"""Fetch the Neo4j Community jars once per machine, with Maven, into the cache dir."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Callable

from ._util import PACKAGE_DIR, Neo4jLaunchError, exclusive_lock, require_executable

POM = PACKAGE_DIR / "pom.xml"
_MARKER = "lib.complete"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _pom_version(pom: Path) -> str:
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    version = ET.parse(pom).getroot().findtext("m:properties/m:neo4j.version", namespaces=ns)
    if not version:
        raise RuntimeError(f"{pom} has no <neo4j.version> property")
    return version.strip()


# The pom is the single source of truth for the version.
NEO4J_VERSION = _pom_version(POM)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ensure_jars(
    cache_dir: Path,
    log: Callable[[str], None] = _stderr,
    mvn_timeout: float = 1800,
) -> Path:
    """Return `cache_dir/neo4j-<version>/lib`, running Maven first if needed.

    The marker file is written only after Maven succeeds, so an interrupted
    download is redone; the flock keeps concurrent callers from racing.
    """
    base = Path(cache_dir) / f"neo4j-{NEO4J_VERSION}"
    lib = base / "lib"
    marker = base / _MARKER
    require_executable("java", "to run the local Neo4j")
    if marker.exists():
        return lib

    waiting = f"Waiting for another process that is fetching Neo4j {NEO4J_VERSION} ..."
    with exclusive_lock(base / ".lock", waiting, log):
        if marker.exists():  # another process finished while we waited
            return lib
        mvn = require_executable("mvn", "once, to fetch the Neo4j jars from Maven Central")
        log(f"Fetching Neo4j {NEO4J_VERSION} jars with Maven into {lib} (first run only) ...")
        partial = base / "lib.partial"
        shutil.rmtree(partial, ignore_errors=True)
        shutil.rmtree(lib, ignore_errors=True)
        _run_maven(mvn, partial, cwd=base, timeout=mvn_timeout)
        if not (partial / f"neo4j-{NEO4J_VERSION}.jar").exists():
            raise Neo4jLaunchError(
                f"Maven succeeded but {partial} has no neo4j-{NEO4J_VERSION}.jar"
            )
        partial.rename(lib)
        marker.write_text(NEO4J_VERSION + "\n")
        log(f"Fetched {sum(1 for _ in lib.glob('*.jar'))} jars.")
    return lib


def _run_maven(mvn: str, lib_dir: Path, cwd: Path, timeout: float) -> None:
    # cwd is the cache dir so a .mvn/ config in the caller's directory has no effect.
    cmd = [
        mvn, "-q", "-B", "-Dstyle.color=never", "-f", str(POM),
        "dependency:copy-dependencies", f"-DlibDir={lib_dir}",
    ]
    hint = "Is Maven installed and Maven Central reachable?"
    try:
        result = subprocess.run(
            cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, errors="replace", timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise Neo4jLaunchError(f"Maven did not finish within {timeout:.0f} s. {hint}") from None
    if result.returncode != 0:
        lines = [line for line in _ANSI.sub("", result.stdout).splitlines() if line.strip()]
        tail = "\n".join(lines[-20:])
        raise Neo4jLaunchError(
            f"Maven failed (exit {result.returncode}) fetching Neo4j {NEO4J_VERSION}. "
            f"{hint}\n$ {' '.join(cmd)}\n{tail}"
        )
