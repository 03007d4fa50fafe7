"""A real Arize Phoenix server on loopback, for the telemetry tests.

Phoenix pins many packages (strawberry-graphql among them), so it lives in a virtualenv of
its own, .venv-phoenix, which `make setup` builds. Missing, it fails the test: never a skip.
"""
from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PHOENIX = ROOT / ".venv-phoenix" / "bin" / "phoenix"
READY_WITHIN_SECONDS = 180  # a deadline to give up at, not an assertion on speed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Phoenix:
    def __init__(self, working_dir: Path) -> None:
        if not PHOENIX.exists():
            pytest.fail(f"{PHOENIX} is missing: `make setup` builds Phoenix's virtualenv "
                        "(.venv-phoenix)", pytrace=False)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = working_dir / "phoenix.log"
        env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(self.port),
               "PHOENIX_GRPC_PORT": str(free_port()), "PHOENIX_WORKING_DIR": str(working_dir)}
        with self.log.open("wb") as log:
            self.process = subprocess.Popen([str(PHOENIX), "serve"], env=env, stdout=log,
                                            stderr=subprocess.STDOUT)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_WITHIN_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"phoenix serve exited {self.process.returncode}:\n"
                            + self.log.read_text(errors="replace")[-3000:], pytrace=False)
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        pytest.fail("phoenix serve did not answer:\n"
                    + self.log.read_text(errors="replace")[-3000:], pytrace=False)

    def spans(self, project: str = "default") -> list[dict]:
        """Every span Phoenix stored in `project`, through its REST API."""
        found, cursor = [], None
        while True:
            params = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
            page = httpx.get(f"{self.url}/v1/projects/{project}/spans", params=params,
                             timeout=30).raise_for_status().json()
            found += page["data"]
            cursor = page.get("next_cursor")
            if not cursor:
                return found

    def sessions(self) -> dict[str, int]:
        """Phoenix's own grouping of traces per conversation: traces by session id."""
        query = ("{ projects { edges { node { name sessions(first: 100) { edges { node "
                 "{ sessionId numTraces } } } } } } }")
        answer = httpx.post(f"{self.url}/graphql", json={"query": query},
                            timeout=30).raise_for_status().json()
        assert "errors" not in answer, answer
        return {s["node"]["sessionId"]: s["node"]["numTraces"]
                for p in answer["data"]["projects"]["edges"]
                for s in p["node"]["sessions"]["edges"]}

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
