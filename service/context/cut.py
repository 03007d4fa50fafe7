"""Where compaction cuts the rendered history (spec §4.2). Pure: no database."""
from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Sequence

from ..store import Node, Rendered, Role
from ..model.blocks import answered_ids, tool_use_ids

MIN_ENTRIES = 4


def verbatim_ids(view: Rendered) -> frozenset[str]:
    """The entries of `view.history` that stay verbatim whatever the cut: the covered turns
    kept after the summary, and every pinned turn with the other half of its tool pairs
    (the render keeps them whole: a pair's halves are neighbours in any render). Under
    segmented, only what follows the last stand-in: the entries before it are no part of
    any cut."""
    history = view.history
    first = view.last_stand_in
    out = {n.id for n in history[first + 1:view.lead]}
    for i, node in enumerate(history):
        if i < first or node.id not in view.pinned_ids:
            continue
        out.add(node.id)
        if i + 1 < len(history) and _pair(node, history[i + 1]):
            out.add(history[i + 1].id)
        if i > 0 and _pair(history[i - 1], node):
            out.add(history[i - 1].id)
    return frozenset(out)


def _pair(uses: Node, answers: Node) -> bool:
    return bool(set(tool_use_ids(uses.blocks)) & set(answered_ids(answers.blocks)))


def find_cut_index(history: Sequence[Node], keep_recent_tokens: int, *,
                   lead: int | None = None, verbatim: AbstractSet[str] = frozenset()) -> int:
    """The index of the first retained entry; everything before it is covered.

    `history` is the rendered view after ROOT: the active summary first (if any), the
    covered turns pinned after it (`lead` is where the turns after them start), then the
    retained turns. The retained tail is the longest suffix of the turns that fits in
    `keep_recent_tokens` together with every entry that stays verbatim whatever the cut
    (`verbatim`: pinned turns with their pair halves, counted once, wherever they are),
    moved forward to the first user turn so the tail opens a turn. The summary always
    lands on the covered side, even when the turns after it all fit (spec §4.2). Returns
    0 when there is no summary and everything fits, `lead` when only the summary (and
    its pinned turns) is covered (the first turn after it opens a tail that fits:
    nothing new to cover), len(history) when no user turn can open a tail.
    """
    cut = _tail_start(history, keep_recent_tokens, lead, verbatim)
    if cut == 0:
        return 0
    while cut < len(history) and not opens_turn(history[cut]):
        cut += 1
    return cut


def opens_turn(node: Node) -> bool:
    """A user message, or a carry node (sent as the user's text, after a message with no
    open tool uses, like a user turn)."""
    return node.role in (Role.USER, Role.CARRY)


@dataclass(frozen=True)
class Cut:
    """Where a compaction cuts: `index` of the first retained entry (None: nowhere, every
    cut would separate a tool use from its result); `split_turn` when the tail opens
    inside a turn."""

    index: int | None
    split_turn: bool = False


def find_cut(history: Sequence[Node], keep_recent_tokens: int, *, lead: int | None = None,
             verbatim: AbstractSet[str] = frozenset()) -> Cut:
    """`find_cut_index`, never separating a tool use from its result.

    A cut before a user turn is always pair-safe: the ledger lets nothing but its answers
    follow a message with open tool uses, so a user turn never does. When no user turn
    opens a tail that fits (an autonomous run: one prompt, then many tool round trips),
    the cut moves inside the turn instead of covering everything: to the first assistant
    message right after a tool message (so after a complete pair) at or after where the
    tail would start, else the last one before it, so the tail keeps the run's most recent
    steps and every covered tool use keeps its result on the covered side. A turn without
    tool round trips is not split: as before, everything is covered, unless that would
    cover a tool use left open; then the tail opens on the last user turn (or, with none,
    nothing is cut).
    """
    lead = _first_turn(history) if lead is None else lead
    index = find_cut_index(history, keep_recent_tokens, lead=lead, verbatim=verbatim)
    if index < len(history):
        return Cut(index)
    starts = [i for i in range(lead + 1, len(history))
              if history[i].role is Role.ASSISTANT and history[i - 1].role is Role.TOOL]
    fits = _tail_start(history, keep_recent_tokens, lead, verbatim)
    later = [i for i in starts if i >= fits]
    if later or starts:
        return Cut(later[0] if later else starts[-1], split_turn=True)
    if not (history and tool_use_ids(history[-1].blocks)):
        return Cut(index)
    # Covering everything would cover tool uses left open: the tail opens on the last user
    # turn instead, though it does not fit (else nothing can be cut).
    users = [i for i in range(lead + 1, len(history)) if opens_turn(history[i])]
    return Cut(users[-1] if users else None)


def _first_turn(history: Sequence[Node]) -> int:
    """Where the turns start: after the summary leading the view, if any."""
    return 1 if history and history[0].role is Role.SUMMARY else 0


def _tail_start(history: Sequence[Node], keep_recent_tokens: int, lead: int | None = None,
                verbatim: AbstractSet[str] = frozenset()) -> int:
    """The start of the longest suffix of the turns after `lead` that fits in
    `keep_recent_tokens` with the `verbatim` entries, which are charged first."""
    start = len(history)
    first_turn = _first_turn(history) if lead is None else lead
    kept = sum(n.tokens for n in history if n.id in verbatim)
    while start > first_turn:
        cost = 0 if history[start - 1].id in verbatim else history[start - 1].tokens
        if kept + cost > keep_recent_tokens:
            break
        start -= 1
        kept += cost
    return start


def cut_after(history: Sequence[Node], node_id: str, lead: int | None = None) -> Cut | None:
    """The cut that covers the turns through `node_id` (`compact(upTo:)`), or None when
    `node_id` is not one of the uncovered turns of `history` (from `lead` on). A cut there
    must keep every tool use with its result: `open_tool_uses` names what it would
    separate.

    The cut splits a turn when the turn goes on after it: the retained tail opens on no
    user turn, or, at the head, the head leaves its turn unfinished (a user turn or a tool
    message, whose reply, when it comes, follows the summary without them)."""
    turns = range(_first_turn(history) if lead is None else lead, len(history))
    index = next((i for i in turns if history[i].id == node_id), None)
    if index is None:
        return None
    rest = history[index + 1:]
    split = not opens_turn(rest[0]) if rest else history[index].role is not Role.ASSISTANT
    return Cut(index + 1, split_turn=split)


def open_tool_uses(history: Sequence[Node], index: int) -> list[str]:
    """The tool uses of `history[:index]` whose results are not also before `index`."""
    opened = [i for n in history[:index] for i in tool_use_ids(n.blocks)]
    answered = {i for n in history[:index] for i in answered_ids(n.blocks)}
    return [i for i in opened if i not in answered]
