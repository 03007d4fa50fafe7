"""Every runnable example of the README and the docs site runs against the real service.

One `ctxdag serve` (its own tenant, the test Neo4j) answers them all; the `ctxdag` commands
in shell blocks work on the same tenant and Neo4j. A shell block fails the test on a non-zero
exit or a GraphQL error in what it prints; a GraphQL block on any error in its answer; a
Python block on a non-zero exit. See tests/doc_examples.py for the marker.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from tests.doc_examples import ROOT, Example, all_examples
from tests.service_process import ServiceProcess

EXAMPLES = all_examples()


@pytest.fixture(scope="module")
def service(neo4j_server):
    env = {"NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password,
           "CTXDAG_TENANT": f"docs-{uuid.uuid4().hex[:8]}"}
    with ServiceProcess(env) as process:
        yield process, neo4j_server.uri


def _environment(process: ServiceProcess) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)  # `ctxdag` and `python` of this run
    return {**process.env, "PATH": bin_dir + os.pathsep + process.env.get("PATH", "")}


def _where(example: Example) -> str:
    return f"{example.file}:{example.line}"


def _by_example(stdout: str, shell: list[Example]) -> dict[str, str]:
    """The script's output cut at the `>>> file:line` line it prints before each block."""
    printed: dict[str, str] = {}
    current = None
    for line in stdout.splitlines(keepends=True):
        if line.startswith(">>> ") and line[4:].strip() in {_where(e) for e in shell}:
            current = line[4:].strip()
            printed[current] = ""
        elif current is not None:
            printed[current] += line
    return printed


def test_the_tour_and_the_guides_have_runnable_examples():
    assert len(EXAMPLES.get("README.md", [])) >= 5, "the README's tour is no longer marked runnable"
    assert sum(len(found) for found in EXAMPLES.values()) > len(EXAMPLES["README.md"])


@pytest.mark.parametrize("document", sorted(EXAMPLES))
def test_every_runnable_example_of_the_document_runs(document, service):
    process, neo4j_uri = service
    env = _environment(process)
    shell = [e for e in EXAMPLES[document] if e.language == "sh"]
    if shell:
        script = "set -euo pipefail\n" + "".join(
            f"echo '>>> {_where(e)}'\n{e.for_service(process.url, neo4j_uri)}" for e in shell)
        done = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"a shell example of {document} failed:\n{output[-4000:]}"
        assert '"errors"' not in done.stdout, f"a GraphQL error in {document}:\n{output[-4000:]}"
        printed = _by_example(done.stdout, shell)
        for example in (e for e in shell if e.prints):
            assert example.prints in printed[_where(example)], (
                f"{_where(example)} should print {example.prints!r}:\n{printed[_where(example)]}")
    for example in (e for e in EXAMPLES[document] if e.language == "graphql"):
        answer = httpx.post(f"{process.url}/graphql", timeout=60, json={
            "query": example.for_service(process.url, neo4j_uri)}).json()
        assert not answer.get("errors"), f"{_where(example)}: {answer['errors']}"
        assert not example.prints or example.prints in json.dumps(answer, ensure_ascii=False)
    for example in (e for e in EXAMPLES[document] if e.language == "python"):
        done = subprocess.run([sys.executable, "-c", example.for_service(process.url, neo4j_uri)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{_where(example)} failed:\n{done.stdout}{done.stderr}"
        assert not example.prints or example.prints in done.stdout, done.stdout
