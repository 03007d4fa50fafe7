"""Run Neo4j Community (embedded, with Bolt) as a JVM child process.

Two modes:
- `LocalNeo4j`: a child that dies with us (its stdin is a pipe we hold; the
  Launcher exits on EOF). For tests and `serve`.
- `start_detached` / `stop_detached` / `detached_status`: a daemon that outlives
  the CLI, tracked by a state file in the home directory.

The home directory is Neo4j's home: data lives in home/data, Neo4j's own logs
in home/logs, and the JVM's stdout/stderr are appended to home/neo4j.log.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType

from ._util import PACKAGE_DIR, Neo4jLaunchError, exclusive_lock, require_executable
from .jars import NEO4J_VERSION

LAUNCHER = PACKAGE_DIR / "Launcher.java"
READY = "CTXDAG_NEO4J_READY"
LOG_NAME = "neo4j.log"
STATE_NAME = "ctxdag-neo4j.json"
_LOCK_NAME = ".ctxdag-neo4j.lock"
_ROTATE_LOG_BYTES = 20 * 1024 * 1024
_JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
)

# Detached JVMs started by this Python process, kept so they are reaped (no
# zombies, no "subprocess still running" warnings) when we stop them.
_detached_children: dict[int, subprocess.Popen[bytes]] = {}


def _reap_detached_children() -> None:
    for pid, child in list(_detached_children.items()):
        if child.poll() is not None:
            del _detached_children[pid]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_open(port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def _uri(port: int) -> str:
    return f"bolt://127.0.0.1:{port}"


class LocalNeo4j:
    """A Neo4j JVM that is our child and dies with us. Same home + same port
    across restarts means the same data."""

    def __init__(
        self, home: Path, port: int, lib_dir: Path, heap: str = "1g", pagecache_mb: int = 512
    ) -> None:
        self.home = Path(home).resolve()
        self.port = port
        self.lib_dir = Path(lib_dir)
        self.heap = heap
        self.pagecache_mb = pagecache_mb
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def uri(self) -> str:
        return _uri(self.port)

    @property
    def log_path(self) -> Path:
        return self.home / LOG_NAME

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 180) -> str:
        if self.running:
            return self.uri
        self._proc = _launch(
            self.home, self.port, self.lib_dir, self.heap, self.pagecache_mb,
            detached=False, timeout=timeout,
        )
        return self.uri

    def stop(self, timeout: float = 60) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        _terminate(proc, timeout)
        if proc.stdin is not None:
            proc.stdin.close()

    def __enter__(self) -> "LocalNeo4j":
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def start_detached(
    home: Path,
    port: int,
    lib_dir: Path,
    heap: str = "1g",
    pagecache_mb: int = 512,
    timeout: float = 180,
) -> str:
    """Start a Neo4j daemon for `home`, or return the uri of the one already
    recorded there (which keeps its own port even if `port` differs)."""
    home = Path(home).resolve()
    _reap_detached_children()
    with exclusive_lock(home / _LOCK_NAME):
        state = _read_state(home)
        if state is not None and _is_our_jvm(state["pid"], home):
            if _port_open(state["port"]):
                return state["uri"]
            raise Neo4jLaunchError(
                f"Neo4j (pid {state['pid']}) is recorded in {home / STATE_NAME} but does "
                f"not accept connections on port {state['port']}; stop it first "
                f"(see {home / LOG_NAME})."
            )
        proc = _launch(home, port, lib_dir, heap, pagecache_mb, detached=True, timeout=timeout)
        _detached_children[proc.pid] = proc
        _write_state(home, {
            "pid": proc.pid,
            "port": port,
            "uri": _uri(port),
            "version": NEO4J_VERSION,
            "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        })
        return _uri(port)


def stop_detached(home: Path, timeout: float = 60) -> bool:
    """Stop the daemon recorded in `home`. False if none was running (a stale
    state file is removed all the same)."""
    home = Path(home).resolve()
    _reap_detached_children()
    with exclusive_lock(home / _LOCK_NAME):
        state = _read_state(home)
        if state is None:
            return False
        pid = state["pid"]
        was_running = _is_our_jvm(pid, home)
        if was_running:
            child = _detached_children.pop(pid, None)
            if child is not None:
                _terminate(child, timeout)
            else:
                _terminate_pid(pid, home, timeout)
        (home / STATE_NAME).unlink(missing_ok=True)
        return was_running


def detached_status(home: Path) -> dict | None:
    """The recorded state if the daemon's pid is alive and its port accepts
    connections; None otherwise."""
    home = Path(home).resolve()
    _reap_detached_children()
    state = _read_state(home)
    if state is None or not _is_our_jvm(state["pid"], home) or not _port_open(state["port"]):
        return None
    return state


# --- launching -------------------------------------------------------------


def _command(
    home: Path, port: int, lib_dir: Path, heap: str, pagecache_mb: int, detached: bool
) -> list[str]:
    java = require_executable("java", "to run the local Neo4j")
    cmd = [
        java, f"-Xmx{heap}", *_JVM_FLAGS,
        "-cp", str(Path(lib_dir).resolve() / "*"),  # the JVM expands the wildcard
        str(LAUNCHER), str(home), str(port), str(pagecache_mb),
    ]
    if not detached:
        cmd.append("--exit-on-stdin-eof")
    return cmd


def _launch(
    home: Path,
    port: int,
    lib_dir: Path,
    heap: str,
    pagecache_mb: int,
    detached: bool,
    timeout: float,
) -> subprocess.Popen[bytes]:
    """Start the JVM and return once its readiness line is in the log."""
    if not (Path(lib_dir) / f"neo4j-{NEO4J_VERSION}.jar").exists():
        raise Neo4jLaunchError(f"{lib_dir} has no Neo4j {NEO4J_VERSION} jars; run ensure_jars first")
    if _port_open(port):
        raise Neo4jLaunchError(
            f"Port {port} on 127.0.0.1 is already in use; cannot start Neo4j there."
        )
    cmd = _command(home, port, lib_dir, heap, pagecache_mb, detached)
    home.mkdir(parents=True, exist_ok=True)
    log_path = home / LOG_NAME
    if log_path.exists() and log_path.stat().st_size > _ROTATE_LOG_BYTES:
        os.replace(log_path, log_path.with_name(LOG_NAME + ".1"))
    with open(log_path, "ab") as log:
        offset = log.tell()
        proc = subprocess.Popen(
            cmd,
            cwd=home,
            stdin=subprocess.DEVNULL if detached else subprocess.PIPE,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=detached,
        )
    try:
        _wait_ready(proc, log_path, offset, f"{READY} {_uri(port)}", timeout)
    except BaseException:
        _terminate(proc, timeout=10)
        if proc.stdin is not None:
            proc.stdin.close()
        raise
    return proc


def _wait_ready(
    proc: subprocess.Popen[bytes], log_path: Path, offset: int, ready_line: str, timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    needle = ready_line.encode()
    with open(log_path, "rb") as log:
        log.seek(offset)
        seen = b""
        while True:
            seen += log.read()
            if needle in seen:
                return
            if proc.poll() is not None:
                raise Neo4jLaunchError(
                    f"Neo4j exited with code {proc.returncode} before it was ready "
                    f"(log: {log_path}):\n{_tail(seen)}"
                )
            if time.monotonic() > deadline:
                raise Neo4jLaunchError(
                    f"Neo4j was not ready within {timeout:.0f} s (log: {log_path}):\n{_tail(seen)}"
                )
            time.sleep(0.1)


def _tail(output: bytes, lines: int = 30) -> str:
    text = output.decode(errors="replace").rstrip()
    return "\n".join(text.splitlines()[-lines:]) if text else "(no output)"


# --- stopping --------------------------------------------------------------


def _terminate(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """SIGTERM (the Launcher's shutdown hook stops Neo4j cleanly), SIGKILL after timeout."""
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _terminate_pid(pid: int, home: Path, timeout: float) -> None:
    """Like _terminate, for a daemon that another process started."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if _wait_gone(pid, home, timeout):
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    if not _wait_gone(pid, home, 10):
        raise Neo4jLaunchError(f"Neo4j (pid {pid}) did not exit after SIGKILL")


def _wait_gone(pid: int, home: Path, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while _is_our_jvm(pid, home):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _is_our_jvm(pid: int, home: Path) -> bool:
    """True while `pid` is a live (not zombie) Launcher for `home`. Checking the
    command line guards against the pid having been reused since it was recorded."""
    child = _detached_children.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process: the pid was reused
    if not Path("/proc/self").is_dir():
        return True  # no procfs (e.g. macOS): trust the pid
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    state = stat.rsplit(")", 1)[-1].split()[0]
    return (
        state not in ("Z", "X")
        and any(arg.endswith(LAUNCHER.name.encode()) for arg in cmdline)
        and os.fsencode(home) in cmdline
    )


# --- state file ------------------------------------------------------------


def _read_state(home: Path) -> dict | None:
    try:
        state = json.loads((home / STATE_NAME).read_text())
        state["pid"], state["port"] = int(state["pid"]), int(state["port"])
        state["uri"] = str(state["uri"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return state


def _write_state(home: Path, state: dict) -> None:
    tmp = home / (STATE_NAME + ".tmp")
    tmp.write_text(json.dumps(state, indent=2) + "\n")
    os.replace(tmp, home / STATE_NAME)
