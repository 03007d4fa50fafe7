"""Builds the service's parts from one Settings object, in one place.

The model provider, summarizer and token estimator are chosen here: Anthropic
when ANTHROPIC_API_KEY is set, otherwise the offline implementations (the
embedded default, named as such in every reply's and summary's metadata).
"""
from __future__ import annotations

from dataclasses import dataclass

from .config import Settings
from .connect import ledger_for, open_database
from .context.budget import BudgetPolicy
from .context.compaction import Compactor
from .events import EventBus
from .context.summarizers import OfflineExtractiveSummarizer, Summarizer
from .context.tokens import HeuristicEstimator, TokenEstimator
from .store import Database, Ledger
from .turns.providers import ModelProvider, OfflineProvider
from .turns.service import Turns


@dataclass(frozen=True)
class TenantServices:
    """The ledger and the services over it, bound to one tenant."""

    ledger: Ledger
    compactor: Compactor
    turns: Turns


@dataclass
class Runtime:
    settings: Settings
    database: Database
    ledger: Ledger
    events: EventBus
    policy: BudgetPolicy
    summarizer: Summarizer
    estimator: TokenEstimator
    compactor: Compactor
    provider: ModelProvider
    turns: Turns

    @classmethod
    async def open(cls, settings: Settings) -> "Runtime":
        database = await open_database(settings)
        return cls.assemble(settings, database)

    @classmethod
    def assemble(cls, settings: Settings, database: Database) -> "Runtime":
        events = EventBus()
        ledger = ledger_for(database, settings, events)
        provider, summarizer, estimator, window = _model_parts(settings)
        policy = BudgetPolicy(window, settings.keep_recent_tokens, settings.auto_compact_ratio)
        compactor = Compactor(ledger, summarizer, policy, events, estimator)
        turns = Turns(ledger, compactor, provider)
        return cls(settings, database, ledger, events, policy, summarizer, estimator, compactor,
                   provider, turns)

    def for_tenant(self, tenant: str) -> TenantServices:
        """Cheap: shares the driver, the event bus and the model parts."""
        if tenant == self.ledger.tenant:
            return TenantServices(self.ledger, self.compactor, self.turns)
        ledger = ledger_for(self.database, self.settings, self.events, tenant)
        compactor = Compactor(ledger, self.summarizer, self.policy, self.events, self.estimator)
        return TenantServices(ledger, compactor, Turns(ledger, compactor, self.provider))

    async def close(self) -> None:
        await self.database.driver.close()


def _model_parts(settings: Settings
                 ) -> tuple[ModelProvider, Summarizer, TokenEstimator, int]:
    from .llm.anthropic import AnthropicSettings

    anthropic_settings = AnthropicSettings.from_env(settings.env)
    if anthropic_settings is None:
        return (OfflineProvider(), OfflineExtractiveSummarizer(), HeuristicEstimator(),
                settings.context_window)
    from .llm.anthropic import make_client
    from .llm.anthropic_provider import AnthropicProvider
    from .llm.anthropic_summarizer import AnthropicSummarizer, AnthropicTokenCounter

    client = make_client(anthropic_settings)
    return (AnthropicProvider(client, anthropic_settings),
            AnthropicSummarizer(client, anthropic_settings),
            AnthropicTokenCounter(client, anthropic_settings),
            anthropic_settings.context_window)
