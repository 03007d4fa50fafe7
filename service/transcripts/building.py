"""What every format's parser shares while it reads: the turns being built, indexed in
file order, and the conversions from source shapes the formats have in common.

A parser appends `Building` turns (parents before children, ROOT as index `ROOT`) and
hands them to `turns_of`, which names each by its last source entry (docs/guides/importing-sessions.md).
A parser kept to read the lines its file gains (reading.py) marks each turn it changes
(`changed`), so `turns_of` makes again only those: the others keep their Turn, which is
how what builds on the turns (document.py) knows what it built for them still holds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from itertools import compress
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .model import ROOT_KEY, SET_ASIDE, Turn, held, restored, tool_name, tool_use_id

if TYPE_CHECKING:
    from .spill import Aside

ROOT = -1  # the index of ROOT among the turns being built


@dataclass(slots=True)
class Building:
    role: str
    parent: int
    line: int
    at: datetime
    message_id: str | None = None
    blocks: list[dict[str, Any]] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    # A sub-agent's turn written into the file itself: on a side branch, CALLER the index of
    # the turn holding the tool use it ran for (Turn.caller, Turn.side_branch).
    caller: int | None = None
    side_branch: bool = False
    out_of_context: bool = False  # Turn.out_of_context
    # Changed since turns_of last made its Turn: whoever changes blocks, entries or meta
    # of a turn after adding it sets this.
    changed: bool = True
    # Where its blocks and meta were set aside (spill.py), which it then does not hold.
    aside: Aside | None = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        # Only an attribute it does not hold comes here: blocks and meta set aside, taken
        # back for good, as the parser reading them may change them.
        if name not in SET_ASIDE or self.aside is None:  # (unset during a copy)
            raise AttributeError(name)
        aside = self.aside
        self.blocks, self.meta = aside.load()
        self.aside = None
        return self.blocks if name == "blocks" else self.meta

    def __reduce__(self) -> tuple[Any, ...]:
        return _building_of, held(self)

    def tool_uses(self) -> list[str]:
        return [b["id"] for b in self.blocks if b["type"] == "tool_use"]

    def answered(self) -> list[str]:
        return [b["tool_use_id"] for b in self.blocks if b["type"] == "tool_result"]


def _building_of(*values: Any) -> Building:
    return restored(Building, values)


def key_at(turns: list[Building], index: int) -> str:
    """The key of the turn at `index` (ROOT's at ROOT)."""
    return ROOT_KEY if index == ROOT else turns[index].entries[-1]


_CHANGED = attrgetter("changed")


def turns_of(turns: list[Building], made: list[Turn] | None = None) -> tuple[Turn, ...]:
    """The turns as Turns. With `made` (the Turns an earlier call made of them, which it
    extends), a turn unchanged since, under the same parent, keeps its Turn (the same
    object): a file's growth makes Turns of what it changed only, and looks at the others
    no more than to see they are unchanged."""
    if made is None:
        return tuple(_turn(turns, b) for b in turns)
    before = min(len(made), len(turns))
    remade = set(compress(range(before), map(_CHANGED, turns)))
    for i in list(remade):
        if turns[i].entries[-1] != made[i].key:  # named anew: the turns after it name it
            remade.update(j for j in range(i + 1, before) if turns[j].parent == i)
    for i in sorted(remade):
        made[i] = _turn(turns, turns[i])
        turns[i].changed = False
    for b in turns[before:]:
        made.append(_turn(turns, b))
        b.changed = False
    return tuple(made[:len(turns)])


def _turn(turns: list[Building], b: Building) -> Turn:
    caller = None if b.caller is None else key_at(turns, b.caller)
    if b.aside is not None:  # its Turn reads them back where they were set aside
        return Turn.set_aside(b.aside, b.entries[-1], key_at(turns, b.parent), b.role, b.at,
                              b.line, tuple(b.entries), caller=caller,
                              side_branch=b.side_branch, out_of_context=b.out_of_context)
    return Turn(b.entries[-1], key_at(turns, b.parent), b.role, tuple(b.blocks), b.at, b.line,
                tuple(b.entries), b.meta, caller=caller, side_branch=b.side_branch,
                out_of_context=b.out_of_context)


def opener(turns: list[Building], parent: int) -> int | None:
    """The assistant message whose tool uses a result after `parent` answers: the parent
    itself, or the one a tool message (answering part of it) follows."""
    if parent == ROOT:
        return None
    if turns[parent].role == "assistant":
        return parent
    if turns[parent].role == "tool":
        return turns[parent].parent
    return None


def text_block(item: dict[str, Any]) -> dict[str, Any] | None:
    """A source's text block, when it holds text (blank text is left out)."""
    text = item.get("text")
    return {"type": "text", "text": text} if isinstance(text, str) and text.strip() else None


def tool_use(raw_id: Any, raw_name: Any, tool_input: Any, meta: dict[str, Any],
             wrap: str) -> dict[str, Any]:
    """A source's tool call as a tool_use block. Ids and names outside the providers'
    pattern are renamed (the node's metadata keeps the source's); an input that is not
    an object is wrapped as {`wrap`: input}."""
    raw_id, raw_name = str(raw_id), str(raw_name)
    use_id, name = tool_use_id(raw_id), tool_name(raw_name)
    if use_id != raw_id:
        meta.setdefault("tool_use_ids", {})[use_id] = raw_id
    if name != raw_name:
        meta.setdefault("tool_names", {})[use_id] = raw_name
    return {"type": "tool_use", "id": use_id, "name": name,
            "input": tool_input if isinstance(tool_input, dict) else {wrap: tool_input}}


def merge_meta(into: dict[str, Any], more: dict[str, Any]) -> None:
    """What a merged entry's metadata adds to its turn's: maps and lists joined, counts
    summed."""
    for key, value in more.items():
        if isinstance(value, dict):
            into.setdefault(key, {}).update(value)
        elif isinstance(value, list):
            into.setdefault(key, []).extend(value)
        elif isinstance(value, int):
            into[key] = into.get(key, 0) + value
