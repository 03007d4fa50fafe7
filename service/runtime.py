"""Builds the service's parts from one Settings object, in one place.

- where Neo4j is (NEO4J_URI if set, else the managed local one), one driver for the
  process with the schema applied (`open_database`);
- the ledger for a tenant under the configured limits (`ledger_for`);
- the model provider, summarizer and token estimator: Anthropic when the settings carry
  an Anthropic part (ANTHROPIC_API_KEY is set), otherwise the offline implementations
  (the embedded default, named as such in every reply's and summary's metadata);
- the token budget, over the context window Settings decided.

`Runtime.open` is how `ctxdag serve` and every CLI command get their parts.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .config import AnthropicSettings, Settings
from .context.budget import BudgetPolicy
from .context.carry import Carrier
from .context.compaction import Compactor
from .context.summarizers import OfflineExtractiveSummarizer, Summarizer
from .context.tokens import HeuristicEstimator, TokenEstimator
from .errors import Unavailable
from .events import EventFeed
from .neo4j_local import detached_status
from .store import Database, Ledger, Limits, open_driver
from . import telemetry
from .turns.providers import ModelProvider, OfflineProvider
from .turns import tool_sets
from .turns.service import Turns
from .turns.streaming import RunningTurns
from .transcripts.kept import Shelf


@dataclass(frozen=True)
class TenantServices:
    """The ledger and the services over it, bound to one tenant."""

    ledger: Ledger
    compactor: Compactor
    turns: Turns

    @property
    def carrier(self) -> Carrier:
        """Branch summaries, with the compaction's summarizer."""
        return Carrier(self.ledger, self.compactor.summarizer,
                       tools_in_force=self.compactor.tools_in_force)


@dataclass
class Runtime:
    settings: Settings
    database: Database
    ledger: Ledger
    events: EventFeed
    policy: BudgetPolicy
    summarizer: Summarizer
    estimator: TokenEstimator
    compactor: Compactor
    provider: ModelProvider
    turns: Turns
    # Streamed turns run here, not in the request following them (turns/streaming.py).
    running: RunningTurns = field(default_factory=RunningTurns)

    @classmethod
    async def open(cls, settings: Settings) -> "Runtime":
        database = await open_database(settings)
        return cls.assemble(settings, database)

    @classmethod
    def assemble(cls, settings: Settings, database: Database) -> "Runtime":
        telemetry.configure(settings.otel_endpoint,
                            capture_messages=settings.otel_capture_messages)
        events = EventFeed(database, settings.event_poll_seconds)
        ledger = ledger_for(database, settings, events)
        provider, summarizer, estimator = _model_parts(settings.anthropic, settings.cache_ttl)
        policy = BudgetPolicy(settings.context_window, settings.keep_recent_tokens,
                              settings.auto_compact_ratio, settings.segment_merge_share)
        compactor = _compactor(ledger, summarizer, policy, estimator)
        turns = Turns(ledger, compactor, provider,
                      recall_budget_tokens=settings.recall_budget_tokens,
                      draft_ttl_seconds=settings.draft_ttl_seconds)
        return cls(settings, database, ledger, events, policy, summarizer, estimator, compactor,
                   provider, turns)

    @property
    def carrier(self) -> Carrier:
        """Branch summaries of the settings' tenant (TenantServices.carrier)."""
        return self.for_tenant(self.ledger.tenant).carrier

    def readings(self, ledger: Ledger, server: bool = False) -> Shelf:
        """Where the imports of `ledger`'s tenant keep the readings of files likely to grow
        (transcripts/kept.py): the cache folder's, apart for the server's importTranscript
        (its files are named by clients, not paths of this machine)."""
        settings = self.settings
        store = f"{settings.neo4j_uri or settings.local_neo4j_home} {settings.neo4j_database}"
        return Shelf(settings.cache_dir / "readings", f"server {store}" if server else store,
                     ledger.tenant, ledger.limits, freeze=not server)

    async def drain(self) -> None:
        """Waits for the streamed turns still running (their subscribers may be gone), at
        most the operation timeout; a turn still running then is cancelled."""
        await self.running.drain(self.settings.operation_timeout_seconds)

    def for_tenant(self, tenant: str) -> TenantServices:
        """Cheap: shares the driver, the event bus and the model parts."""
        if tenant == self.ledger.tenant:
            return TenantServices(self.ledger, self.compactor, self.turns)
        ledger = ledger_for(self.database, self.settings, self.events, tenant)
        compactor = _compactor(ledger, self.summarizer, self.policy, self.estimator)
        return TenantServices(ledger, compactor,
                              Turns(ledger, compactor, self.provider, self.turns.renders,
                                    recall_budget_tokens=self.settings.recall_budget_tokens,
                                    draft_ttl_seconds=self.settings.draft_ttl_seconds))

    async def close(self) -> None:
        await self.drain()
        telemetry.flush()
        await self.events.close()
        await self.database.driver.close()


def _compactor(ledger: Ledger, summarizer: Summarizer, policy: BudgetPolicy,
               estimator: TokenEstimator) -> Compactor:
    """A compaction no turn handed options to offers the session's tool set in force."""
    async def tools_in_force(session_id: str, head_id: str):
        return await tool_sets.offered(ledger, session_id, head_id)

    return Compactor(ledger, summarizer, policy, estimator, tools_in_force=tools_in_force)


def neo4j_uri(settings: Settings) -> str:
    """NEO4J_URI if set, else the managed local Neo4j's (Unavailable when it is not running)."""
    if settings.neo4j_uri:
        return settings.neo4j_uri
    state = detached_status(settings.local_neo4j_home)
    if state is None:
        raise Unavailable("the managed local Neo4j is not running: start it with "
                          "`ctxdag neo4j up`, or point NEO4J_URI at an existing Neo4j 5.x")
    return state["uri"]


async def open_database(settings: Settings) -> Database:
    """One driver for the process; the schema is applied before anything else runs."""
    password = settings.neo4j_password if settings.neo4j_uri else ""
    driver = open_driver(neo4j_uri(settings), settings.neo4j_user, password)
    database = Database(driver, database=settings.neo4j_database)
    try:
        await database.apply_schema()
    except BaseException:
        await driver.close()
        raise
    return database


def ledger_for(database: Database, settings: Settings, events: EventFeed | None = None,
               tenant: str | None = None) -> Ledger:
    """The ledger of `tenant` (default: the settings' tenant) under the configured limits;
    `events` hears of the events its writes commit."""
    limits = Limits(settings.max_content_bytes, settings.max_metadata_bytes,
                    settings.max_call_reads, settings.event_retention, settings.max_media_bytes)
    return Ledger.open(database, tenant or settings.tenant, limits,
                       None if events is None else events.committed)


def _model_parts(anthropic: AnthropicSettings | None, cache_ttl: str
                 ) -> tuple[ModelProvider, Summarizer, TokenEstimator]:
    if anthropic is None:
        return OfflineProvider(), OfflineExtractiveSummarizer(), HeuristicEstimator()
    from .llm.anthropic import make_client
    from .llm.anthropic_provider import AnthropicProvider
    from .llm.anthropic_summarizer import AnthropicSummarizer, AnthropicTokenCounter

    client = make_client(anthropic)
    return (AnthropicProvider(client, anthropic, cache_ttl=cache_ttl),
            AnthropicSummarizer(client, anthropic, cache_ttl=cache_ttl),
            AnthropicTokenCounter(client, anthropic))
