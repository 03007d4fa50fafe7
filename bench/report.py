"""The machine, the table (text and Markdown) and the JSON file."""
from __future__ import annotations

import json
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def _run(cmd: list[str]) -> str:
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        return (done.stdout + done.stderr).strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unavailable ({e})"


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def load() -> dict[str, Any]:
    one, five, fifteen = os.getloadavg()
    return {"1m": one, "5m": five, "15m": fifteen, "uptime": _run(["uptime"])}


def machine() -> dict[str, Any]:
    lscpu = _run(["lscpu"])
    model = next((line.split(":", 1)[1].strip() for line in lscpu.splitlines()
                  if line.startswith("Model name")), platform.processor())
    return {
        "nproc": _run(["nproc"]),
        "cpu_model": model,
        "lscpu": lscpu,
        "free_h": _run(["free", "-h"]),
        "java": _run(["java", "-version"]).splitlines()[0:2],
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": {p: _version(p) for p in (
            "neo4j", "langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite",
            "langchain-core")},
    }


def verdict(row: dict[str, Any]) -> str:
    if row["status"] != "ok":
        return row["status"].upper() if row["status"] == "failed" else row["status"]
    if row["met"] is None:
        return ""
    return "met" if row["met"] else "MISSED"


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def table_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    out = []
    for i, row in enumerate(rows, 1):
        value = f"{_fmt(row['value'])} {row['unit']}".strip() if row["value"] is not None else ""
        out.append([
            str(i), row["section"], row["case"], _fmt(row["n"]), _fmt(row["p50_ms"]),
            _fmt(row["p95_ms"]), _fmt(row["floor_ms"]),
            f"{row['ratio']:.2f}×" if row["ratio"] is not None else "",
            value, _fmt(row["round_trips"]), row["target"], verdict(row),
        ])
    return out


HEADER = ["#", "workload", "case", "n", "p50 ms", "p95 ms", "floor ms", "× floor", "value",
          "trips", "target", "verdict"]
NUMERIC = {3, 4, 5, 6, 7, 8, 9}


def text_table(rows: list[dict[str, Any]]) -> str:
    body = table_rows(rows)
    widths = [max(len(HEADER[c]), *(len(r[c]) for r in body)) if body else len(HEADER[c])
              for c in range(len(HEADER))]
    right = NUMERIC
    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))
    lines = [line(HEADER), line(["-" * w for w in widths])]
    last_section = None
    for cells in body:
        if last_section is not None and cells[1] != last_section:
            lines.append("")
        last_section = cells[1]
        lines.append(line(cells))
    notes = [f"  [{i}] {row['note']}" for i, row in enumerate(rows, 1) if row["note"]]
    return "\n".join(lines + ["", "notes:"] + notes)


def markdown_table(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(HEADER + ["note"]) + " |",
             "|" + "|".join("---:" if i in NUMERIC else "---"
                            for i in range(len(HEADER) + 1)) + "|"]
    for cells, row in zip(table_rows(rows), rows):
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells + [row["note"]])
                     + " |")
    return "\n".join(lines)


def write(result: dict[str, Any], name: str = "latest") -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=2, default=str) + "\n")
    (RESULTS / f"{name}.md").write_text(markdown_table(result["rows"]) + "\n")
    return path
