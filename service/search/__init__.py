"""Full-text search of the ledger (docs/guides/search.md), each hit placed in the model's
context. Above store/ and beside context/: api → search → store."""
from .find import Filters, Hit, HitPage, search
from .placement import Placement, State
from .query import Field

__all__ = ["Field", "Filters", "Hit", "HitPage", "Placement", "State", "search"]
