"""The runnable examples of the README and docs/: every code block right after a line
`<!-- run -->` (invisible on GitHub and on the site).

A marked block is `sh`/`bash` (a file's shell blocks run in order in one shell, so a
variable set in one is seen by the next, as a reader typing them would), `graphql` (one
operation, posted as it stands) or `python` (a program of its own). Examples are written
for the service at http://127.0.0.1:8000 and the managed Neo4j at bolt://127.0.0.1:7687;
the test swaps in the addresses of the ones it started (`for_service`).

`<!-- run: prints "some text" -->` also holds the block to what the page says of it: its
output must contain that text (a JSON string).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^<!-- run(?:: prints (\".*\"))? -->$")
LANGUAGES = {"sh": "sh", "bash": "sh", "shell": "sh", "graphql": "graphql", "python": "python"}
SERVICE_URL = "http://127.0.0.1:8000"
NEO4J_URI = "bolt://127.0.0.1:7687"
FENCE = re.compile(r"^```([\w-]*)\s*$")


@dataclass(frozen=True)
class Example:
    file: str
    line: int  # of its opening fence, 1-based
    language: str  # sh, graphql or python
    code: str
    prints: str | None = None  # text its output must contain

    def for_service(self, url: str, neo4j_uri: str) -> str:
        return self.code.replace(SERVICE_URL, url).replace(NEO4J_URI, neo4j_uri)


class BadMarker(ValueError):
    """A marker that would silently run nothing: not followed by a fence of a known language."""


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def examples(path: Path, root: Path = ROOT) -> list[Example]:
    lines = path.read_text().split("\n")
    name = str(path.relative_to(root))
    found: list[Example] = []
    for index, line in enumerate(lines):
        marker = MARKER.match(line.strip())
        if marker is None:
            if line.strip().startswith("<!-- run"):
                raise BadMarker(f"{name}:{index + 1}: not a run marker: {line.strip()}")
            continue
        fence = FENCE.match(lines[index + 1]) if index + 1 < len(lines) else None
        language = LANGUAGES.get(fence.group(1)) if fence else None
        if language is None:
            raise BadMarker(f"{name}:{index + 1}: <!-- run --> must be followed by a ```sh, "
                            f"```graphql or ```python block")
        end = next(j for j in range(index + 2, len(lines)) if lines[j].startswith("```"))
        prints = json.loads(marker.group(1)) if marker.group(1) else None
        found.append(Example(name, index + 2, language, "\n".join(lines[index + 2:end]) + "\n",
                             prints))
    return found


def all_examples() -> dict[str, list[Example]]:
    """Each document's examples, documents without any left out."""
    return {str(p.relative_to(ROOT)): found for p in documents() if (found := examples(p))}
