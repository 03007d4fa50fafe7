"""Where a hit stands in the model's context: its place in one head's render.

Decided from the render of the head (service/context/render.py) and the summaries whose
segments hold the node, so it says exactly what the model reads at that head:

- IN_CONTEXT: the render holds the node itself (a turn verbatim, a summary standing in,
  the ROOT);
- PINNED: a turn a summary covers, rendered after it because it is pinned;
- SUMMARIZED: not rendered; a summary the render shows stands in for it (`summary_id`);
- NOT_RENDERED: a summary the render does not show (superseded, uncompacted, absorbed
  into a later one or another branch's), or a turn no render reads (`outOfContext`: an
  imported reply its tool never sent to the model, and its tool results);
- OTHER_BRANCH: a turn off the head's path (another branch, or after the head); when a
  summary there covers it, `summary_id` names the newest such and `summary_rendered` is
  false;
- DELETED: removed with its branch (`deleteBranch`): kept in the ledger, never rendered.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Sequence

from ..model.kinds import Role
from ..model.models import Node, Rendered


class State(str, Enum):
    IN_CONTEXT = "in_context"
    PINNED = "pinned"
    SUMMARIZED = "summarized"
    NOT_RENDERED = "not_rendered"
    OTHER_BRANCH = "other_branch"
    DELETED = "deleted"


@dataclass(frozen=True)
class Placement:
    state: State
    head_id: str
    summary_id: str | None = None  # the summary standing in for it (or covering it elsewhere)
    summary_rendered: bool | None = None  # whether the head's render shows that summary


def place(node: Node, rendered: Rendered, covering: Sequence[str]) -> Placement:
    """`covering`: the summaries whose segments hold the node, newest first."""
    head = rendered.head_id
    if node.deleted:
        return Placement(State.DELETED, head)
    shown = set(rendered.node_ids)
    standing = next((s for s in covering if s in shown), None)
    if node.id in shown:
        if standing is not None and node.id in rendered.pinned_ids:
            return Placement(State.PINNED, head, standing, True)
        return Placement(State.IN_CONTEXT, head)
    if node.role is Role.SUMMARY or node.out_of_context:
        return Placement(State.NOT_RENDERED, head)
    if standing is not None:
        return Placement(State.SUMMARIZED, head, standing, True)
    newest = covering[0] if covering else None
    return Placement(State.OTHER_BRANCH, head, newest, False if newest else None)
