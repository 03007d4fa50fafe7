"""`ctxdag serve` as a real process, for tests that restart the service or stop its Neo4j."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from service.neo4j_local import free_port


class ServiceProcess:
    def __init__(self, env: dict[str, str]) -> None:
        self.env = {**os.environ, **env}
        self.env.pop("ANTHROPIC_API_KEY", None) if "ANTHROPIC_API_KEY" not in env else None
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[str] | None = None
        # A file, not a pipe: nobody reads while it runs, and a full pipe would block the server.
        self.log = Path(tempfile.mkstemp(prefix="ctxdag-serve-", suffix=".log")[1])

    @property
    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def start(self, timeout: float = 180) -> "ServiceProcess":
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "service.cli", "serve", "--port", str(self.port)],
                env=self.env, stdout=log, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ctxdag serve exited: {self.output[-3000:]}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=10).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError("ctxdag serve did not become healthy")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=60)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def __enter__(self) -> "ServiceProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
