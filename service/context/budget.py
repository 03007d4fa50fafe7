"""The token budget policy: when to compact automatically, how much to keep, and how
much pins may hold."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import BadInput

# ROOT and the pinned messages (with the other halves of their tool pairs) may hold at most
# this share of the context window: pins are rendered after every compaction, so they must
# leave room for the summary and a tail (docs/concepts/annotations.md).
PIN_SHARE = 0.25
# Segmented: when the stand-ins' own tokens pass this share of the context window, the oldest
# are merged into one nested summary (docs/segmented.md, "Nesting").
DEFAULT_SEGMENT_MERGE_SHARE = 0.25


@dataclass(frozen=True)
class BudgetPolicy:
    context_window: int = 200_000  # the model's context budget, in tokens
    keep_recent_tokens: int = 20_000  # the retained tail after a compaction
    auto_compact_ratio: float = 0.8  # compact before a turn whose prompt reaches this share
    segment_merge_share: float = DEFAULT_SEGMENT_MERGE_SHARE

    def __post_init__(self) -> None:
        if self.context_window <= 0 or self.keep_recent_tokens < 0:
            raise BadInput("context_window must be positive and keep_recent_tokens not negative")
        if not 0 < self.auto_compact_ratio <= 1:
            raise BadInput("auto_compact_ratio must be in (0, 1]")
        if not 0 < self.segment_merge_share <= 1:
            raise BadInput("segment_merge_share must be in (0, 1]")
        if self.keep_recent_tokens >= self.auto_compact_at:
            raise BadInput(
                f"keep_recent_tokens ({self.keep_recent_tokens}) must be below the automatic "
                f"compaction point ({self.auto_compact_at} tokens), or compaction could never "
                "make room")

    @property
    def auto_compact_at(self) -> int:
        return int(self.context_window * self.auto_compact_ratio)

    @property
    def max_pinned_tokens(self) -> int:
        return int(self.context_window * PIN_SHARE)

    @property
    def segment_merge_at(self) -> int:
        """Segmented: the stand-ins' tokens past which the oldest are merged."""
        return int(self.context_window * self.segment_merge_share)

    def needs_compaction(self, prompt_tokens: int) -> bool:
        return prompt_tokens >= self.auto_compact_at
