"""The `ctxdag` command, run as a user runs it, against the test run's Neo4j."""
import os
import re
import subprocess
import sys


def ctxdag(server, tenant, *args):
    env = {**os.environ, "NEO4J_URI": server.uri, "NEO4J_USER": server.user,
           "NEO4J_PASSWORD": server.password, "CTXDAG_TENANT": tenant}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run([sys.executable, "-m", "service.cli", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_smoke_render_and_compact_from_the_command_line(neo4j_server, neo4j_driver, tenant):
    smoke = ctxdag(neo4j_server, tenant, "smoke")
    assert smoke.returncode == 0, smoke.stderr
    assert "compaction: COMPACTED" in smoke.stdout and "invariants: ok" in smoke.stdout
    assert "by offline-extractive" in smoke.stdout
    session = re.search(r"session (ses_\w+)", smoke.stdout).group(1)

    render = ctxdag(neo4j_server, tenant, "render", session)
    assert render.returncode == 0, render.stderr
    roles = [line.split()[2] for line in render.stdout.splitlines()[1:]]
    assert roles == ["system", "summary", "user", "assistant"]

    again = ctxdag(neo4j_server, tenant, "compact", session, "--keep", "0")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("SKIPPED") or again.stdout.startswith("COMPACTED")


def test_errors_are_coded_and_readable(neo4j_server, neo4j_driver, tenant):
    missing = ctxdag(neo4j_server, tenant, "render", "ses_missing")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "error: NOT_FOUND: session 'ses_missing' does not exist"


def test_status_names_an_external_neo4j(neo4j_server, tenant):
    status = ctxdag(neo4j_server, tenant, "neo4j", "status")
    assert status.returncode == 0
    assert neo4j_server.uri in status.stdout
