"""The kinds the ledger names (who speaks, why a model was called, which summaries count)
and the one conversion of a driver value; every other module of the model builds on these."""
from __future__ import annotations

from enum import Enum
from typing import Any


class Role(str, Enum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SUMMARY = "summary"
    # A branch summary: the stand-in, on the branch it was carried into, for a branch's
    # turns that are not on this chain (docs/concepts/annotations.md). A turn of its chain,
    # never a compaction summary.
    CARRY = "carry"


class SummaryStrategy(str, Enum):
    """Which summaries a session's renders consider (docs/concepts/strategies.md)."""

    ROLLING = "rolling"  # the active summary alone (one at a time)
    BRANCH = "branch"  # each head: the deepest summary compacted on its own path
    SEGMENTED = "segmented"  # each head: a stand-in per disjoint segment of its chain


class Purpose(str, Enum):
    CHAT = "chat"
    SUMMARIZE = "summarize"
    TASK = "task"
    EXTERNAL = "external"


def native(value: Any) -> Any:
    return value.to_native() if hasattr(value, "to_native") else value
