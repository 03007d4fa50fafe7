"""Recall (docs/guides/recall.md): the model reads back the turns a summary stands in for.
Above search/ and store/, below turns/: turns → recall → search → store."""
from .expand import DEFAULT_BUDGET_TOKENS, ExpandPage, expand
from .covered import CoveredHit, search_covered

__all__ = ["CoveredHit", "DEFAULT_BUDGET_TOKENS", "ExpandPage", "expand", "search_covered"]
