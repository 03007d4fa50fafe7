"""How a drawing folds the session graph into capsules: the one place the rule lives.

The graph's capsule rows carry `covers_ids` (cypher/session_graph.cypher): a capsule
stands in for exactly those rows. A drawing then

- folds a row into a capsule when the capsule's `covers_ids` holds it; when several do
  (only under the branch strategy, where capsules on diverging branches share the turns
  before the fork), into the one with the fewest ids, the newest among equals: the
  innermost stand-in, whose expansion shows the row in the shortest segment;
- draws every other row, relics included (they fold nothing);
- draws the edge into a drawn row from its predecessor when that is drawn, and from the
  capsule its predecessor folds into otherwise: the first turn kept below a segment, or
  a branch forked off a covered turn, hangs from the capsule.

Everything restates `covers_ids`: no seq arithmetic and nothing that depends on HEAD.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .views import GraphRow


@dataclass(frozen=True)
class Placement:
    folded_into: str | None  # the capsule the row folds into; None when it is drawn
    drawn_from: str | None  # where the edge into the row starts; None for ROOT


def fold(rows: Sequence[GraphRow]) -> dict[str, Placement]:
    """Where each row of one session's graph is drawn."""
    innermost: dict[str, GraphRow] = {}
    for capsule in rows:
        for member in capsule.covers_ids or ():
            held = innermost.get(member)
            if held is None or _inner(capsule, held):
                innermost[member] = capsule
    folded = {member: capsule.id for member, capsule in innermost.items()}
    return {r.id: Placement(folded.get(r.id), _drawn_from(r.predecessor_id, folded))
            for r in rows}


def _inner(capsule: GraphRow, than: GraphRow) -> bool:
    size, other = len(capsule.covers_ids or ()), len(than.covers_ids or ())
    return size < other or (size == other and capsule.seq > than.seq)


def _drawn_from(predecessor_id: str | None, folded: dict[str, str]) -> str | None:
    if predecessor_id is None:
        return None
    return folded.get(predecessor_id, predecessor_id)
