"""Where compaction cuts the rendered history (spec §4.2). Pure: no database."""
from __future__ import annotations

from typing import Sequence

from ..store import Node, Role

MIN_ENTRIES = 4


def find_cut_index(history: Sequence[Node], keep_recent_tokens: int) -> int:
    """The index of the first retained entry; everything before it is covered.

    `history` is the rendered view after ROOT: the active summary first (if any),
    then the retained turns. The retained tail is the longest suffix of the turns
    whose tokens fit in `keep_recent_tokens`, moved forward to the first user turn so
    the tail opens a turn. The summary always lands on the covered side, even when
    the turns after it all fit (spec §4.2). Returns 0 when there is no summary and
    everything fits, 1 when only the summary is covered (the first turn after it
    opens a tail that fits: nothing new to cover), len(history) when no user turn
    can open a tail.
    """
    first_turn = 1 if history and history[0].role is Role.SUMMARY else 0
    kept_tokens = 0
    cut = len(history)
    while cut > first_turn and kept_tokens + history[cut - 1].tokens <= keep_recent_tokens:
        cut -= 1
        kept_tokens += history[cut].tokens
    if cut == 0:
        return 0
    while cut < len(history) and history[cut].role is not Role.USER:
        cut += 1
    return cut
