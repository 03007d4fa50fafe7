import subprocess
import sys
import uuid

import pytest

from tests.api_client import Client
from tests.service_process import ServiceProcess
from tests.stubs.anthropic_stub import AnthropicStub


@pytest.fixture(scope="module")
def service(neo4j_server):
    """`ctxdag serve` as its own process on the test run's Neo4j, single tenant, loopback."""
    tenant = f"scenarios-{uuid.uuid4().hex[:8]}"
    process = ServiceProcess({"NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
                              "NEO4J_PASSWORD": neo4j_server.password,
                              "CTXDAG_TENANT": tenant})
    with process:
        process.tenant = tenant
        yield process


@pytest.fixture
def client(service) -> Client:
    return Client(service.url)


@pytest.fixture
def checked(service):
    """A list the scenario adds its sessions to; `ctxdag check` runs over each afterwards."""
    sessions: list[str] = []
    yield sessions
    for session_id in sessions:
        result = subprocess.run([sys.executable, "-m", "service.cli", "check", session_id],
                                env=service.env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.startswith("ok: 1 session checked"), result.stdout


@pytest.fixture(scope="module")
def stub():
    """One Anthropic stub for a module whose service process is pointed at it."""
    with AnthropicStub() as server:
        yield server
