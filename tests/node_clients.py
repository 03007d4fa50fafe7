"""JavaScript GraphQL clients for the tests: Node scripts in tests/clients/ run against
the served app, with npm packages pinned by a lock file there (tests/clients/<name>/).

The packages are installed once per machine (`npm ci`, from the lock) into the user
cache dir — `~/.cache/ctxdag/npm-<name>/<digest of the lock>`, outside the repository —
under a lock, so concurrent runs do not clash, with a marker written only once the
install succeeded. A missing node or npm, or an install that fails (no registry), is an
error with the reason, never a skip.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from service.config import Settings
from service.neo4j_local._util import exclusive_lock

CLIENTS_DIR = Path(__file__).resolve().parent / "clients"
MARKER = "installed"
NPM_TIMEOUT = 600


class NodeClientUnavailable(RuntimeError):
    pass


def _executable(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise NodeClientUnavailable(f"`{name}` is not on PATH; the JavaScript client tests "
                                    "need Node 18+ and npm")
    return path


def packages(name: str) -> Path:
    """The directory holding node_modules for tests/clients/<name>/, installed if needed."""
    source = CLIENTS_DIR / name
    lock = (source / "package-lock.json").read_bytes()
    digest = hashlib.sha256((source / "package.json").read_bytes() + lock).hexdigest()[:16]
    base = Settings.from_env(os.environ).cache_dir / f"npm-{name}" / digest
    if (base / MARKER).exists():
        return base
    npm = _executable("npm")
    with exclusive_lock(base / ".lock", f"waiting for another install of {name} ...",
                        lambda line: print(line, file=sys.stderr)):
        if (base / MARKER).exists():
            return base
        shutil.rmtree(base / "node_modules", ignore_errors=True)
        for file in ("package.json", "package-lock.json"):
            shutil.copyfile(source / file, base / file)
        command = [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts",
                   "--loglevel=error"]
        try:
            result = subprocess.run(command, cwd=base, capture_output=True, text=True,
                                    timeout=NPM_TIMEOUT, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise NodeClientUnavailable(f"`npm ci` for {name} did not finish within "
                                        f"{NPM_TIMEOUT} s in {base}; is the npm registry "
                                        "reachable?") from None
        if result.returncode != 0:
            tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-20:])
            raise NodeClientUnavailable(
                f"`npm ci` for {name} failed (exit {result.returncode}) in {base}; is the "
                f"npm registry reachable?\n$ {' '.join(command)}\n{tail}")
        (base / MARKER).write_text(digest + "\n")
    return base


def run(script: str, name: str, *args: str, timeout: float = 120) -> dict:
    """Runs tests/clients/`script` with the packages of `name`; its last stdout line, as
    JSON. The script is copied next to node_modules: ES modules resolve packages from
    the importing file's directory upwards, and NODE_PATH does not apply to them."""
    node = _executable("node")
    base = packages(name)
    with tempfile.TemporaryDirectory(dir=base, prefix="run-") as scratch:
        copy = Path(scratch) / script
        shutil.copyfile(CLIENTS_DIR / script, copy)
        try:
            result = subprocess.run([node, str(copy), *args], capture_output=True, text=True,
                                    timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{script} ({name}) did not finish within {timeout:.0f} s") \
                from None
    lines = result.stdout.strip().splitlines()
    if result.returncode != 0 or not lines:
        raise AssertionError(f"{script} ({name}) failed (exit {result.returncode}):\n"
                             f"{result.stdout[-2000:]}\n{result.stderr[-4000:]}")
    return json.loads(lines[-1])


async def run_async(script: str, name: str, *args: str, timeout: float = 120) -> dict:
    """`run` in a thread, so a server in the caller's event loop keeps answering."""
    return await asyncio.to_thread(run, script, name, *args, timeout=timeout)
