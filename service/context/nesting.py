"""Which stand-ins a segmented compaction merges into one nested summary (docs/segmented.md,
"Nesting"). Pure: the caller reads the stand-ins and writes the merge.

When the stand-ins' own tokens pass the budget's `segment_merge_at`, the oldest consecutive
ones are merged: from the first, as many as bring the rest to at most half that point, at
least two, never the last (nearest the head: usually the one just written, whose segment the
next calls read after the merged prefix), and never across turns rendered verbatim between
two stand-ins (an uncompacted gap): a nested summary covers one contiguous segment.
"""
from __future__ import annotations

from typing import Sequence

from ..store import Summary

MIN_MERGED = 2


def merge_run(stand_ins: Sequence[Summary], merge_at: int) -> tuple[Summary, ...]:
    """The stand-ins (prompt order, with their coverage) to merge; () for none."""
    total = sum(s.node.tokens for s in stand_ins)
    if total <= merge_at or len(stand_ins) <= MIN_MERGED:
        return ()
    run: list[Summary] = []
    remaining = total
    for summary in stand_ins[:-1]:
        if run and summary.node.predecessor_id != run[-1].covers_ids[-1]:
            break  # verbatim turns lie between them
        run.append(summary)
        remaining -= summary.node.tokens
        if len(run) >= MIN_MERGED and remaining <= merge_at // 2:
            break
    return tuple(run) if len(run) >= MIN_MERGED else ()
