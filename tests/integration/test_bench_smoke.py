"""The benchmark harness still runs against today's service: every workload but the
replicas' (11, which starts three `ctxdag serve` processes and is covered by the
scenario tests of replicas) runs its code once on tiny sizes (`python -m bench --smoke`).
The figures mean nothing; a workload that raises is an `error` row and fails this test."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKLOADS = [str(n) for n in range(1, 18) if n != 11]


def test_every_workload_runs():
    name = f"smoke-test-{os.getpid()}"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--only", ",".join(WORKLOADS), "--name", name],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    results = ROOT / "bench" / "results" / f"{name}.json"
    try:
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
        run = json.loads(results.read_text())
    finally:
        for path in (results, results.with_suffix(".md")):
            path.unlink(missing_ok=True)
    assert run["run"]["errors"] == []
    assert run["run"]["mode"] == "smoke"
    errored = [r["case"] for r in run["rows"] if r["status"] == "error"]
    assert errored == []
    ran = {r["section"].split()[0] for r in run["rows"]}
    assert ran == set(WORKLOADS), f"workloads without a row: {set(WORKLOADS) - ran}"
