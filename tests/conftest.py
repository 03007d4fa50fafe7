"""Shared fixtures. Integration tests run on a real Neo4j, started once per test session.

A missing Neo4j is a failure, never a skip: the tests that need it error out
with the reason.
"""
from __future__ import annotations

import uuid

import pytest
import pytest_asyncio

from service.store import Database, Ledger, Limits, open_driver
from tests.fast_tier import is_fast, missing
from tests.neo4j_source import Neo4jServer, start_neo4j


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "fast: the fast tier, `make check` (tests/fast_tier.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_fast(item.nodeid):
            item.add_marker(pytest.mark.fast)
    whole_suite = config.args_source is pytest.Config.ArgsSource.TESTPATHS
    if config.getoption("markexpr") == "fast" and whole_suite and \
            (lost := missing([item.nodeid for item in items])):
        raise pytest.UsageError(f"tests/fast_tier.py names tests that do not exist: {lost}")


def _say(config: pytest.Config, line: str) -> None:
    """Writes past pytest's output capture, so the line shows in every run."""
    capture = config.pluginmanager.get_plugin("capturemanager")
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if capture is None or reporter is None:
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(line)


@pytest.fixture(scope="session")
def neo4j_server(request: pytest.FixtureRequest,
                 tmp_path_factory: pytest.TempPathFactory) -> Neo4jServer:
    try:
        server = start_neo4j(tmp_path_factory.mktemp("neo4j"))
    except Exception as e:  # noqa: BLE001 - any reason is reported as it is
        pytest.fail(f"no Neo4j for the integration tests: {type(e).__name__}: {e}", pytrace=False)
    yield server
    server.stop()


@pytest_asyncio.fixture(scope="session")
async def neo4j_driver(request: pytest.FixtureRequest, neo4j_server: Neo4jServer):
    driver = open_driver(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    database = Database(driver)
    agent = await database.ping()
    version = await database.apply_schema()
    _say(request.config, f"\nNeo4j for this run: {agent} from {neo4j_server.origin} "
                         f"at {neo4j_server.uri}; schema version {version}")
    yield driver
    await driver.close()


@pytest.fixture
def db(neo4j_driver) -> Database:
    """A fresh Database per test (own round-trip counter) over the shared driver."""
    return Database(neo4j_driver)


@pytest.fixture
def tenant() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def ledger(db: Database, tenant: str, events) -> Ledger:
    """Each test gets its own tenant, so its sessions never meet another test's."""
    return Ledger.open(db, tenant, Limits(), events.committed)


@pytest.fixture
def events():
    """The events the test's ledger commits, as they commit (`ledger` reports to it)."""
    from tests.integration.helpers import CommittedEvents

    return CommittedEvents()


@pytest.fixture
def compactor(ledger: Ledger, events):
    from tests.integration.helpers import make_compactor

    return make_compactor(ledger)


@pytest.fixture
def turns(ledger: Ledger, compactor):
    from service.turns.providers import OfflineProvider
    from service.turns.service import Turns

    return Turns(ledger, compactor, OfflineProvider())


@pytest_asyncio.fixture(scope="module")
async def api(neo4j_driver):
    """The real app served by uvicorn on a loopback port, with two tenants' tokens.

    Yields a namespace: `url`, `db` (the server's Database, to count round trips),
    `client` (tenant A), `other` (tenant B), `anonymous` (no token).
    """
    import types

    from service.config import Settings
    from tests.api_client import Client
    from tests.app_server import serve
    from tests.integration.helpers import COMMANDS_CACHE

    run = uuid.uuid4().hex[:8]
    token_a, token_b = f"token-a-{run}", f"token-b-{run}"
    settings = Settings.from_env({
        "CTXDAG_API_TOKENS": f"{token_a}=tenant-a-{run},{token_b}=tenant-b-{run}",
        "CTXDAG_CACHE": COMMANDS_CACHE,
    })
    database = Database(neo4j_driver)
    async with serve(settings, database) as url:
        yield types.SimpleNamespace(url=url, db=database, client=Client(url, token_a),
                                    other=Client(url, token_b), anonymous=Client(url),
                                    tenant=f"tenant-a-{run}")


@pytest.fixture
def stub():
    """A local stub of the Anthropic Messages API (tests/stubs/anthropic_stub.py)."""
    from tests.stubs.anthropic_stub import AnthropicStub

    with AnthropicStub() as server:
        yield server


@pytest.fixture
def anthropic_runtime(db, tenant, stub):
    """A runtime wired to Anthropic through the real SDK, pointed at the stub.

    Call it with env overrides, e.g. anthropic_runtime(CTXDAG_ANTHROPIC_MAX_RETRIES="0").
    """
    from service.config import Settings
    from service.runtime import Runtime

    def build(**env: str):
        return Runtime.assemble(Settings.from_env({
            "CTXDAG_TENANT": tenant, "ANTHROPIC_API_KEY": "test-key",
            "ANTHROPIC_BASE_URL": stub.base_url, "CTXDAG_ANTHROPIC_MODEL": "claude-stub",
            "CTXDAG_KEEP_RECENT_TOKENS": "100", **env,
        }), db)

    return build

