"""The recall tools in a turn (docs/guides/recall.md): offered beside the client's tools when the
session, or the turn's `recall` argument, enables them, and answered by the service itself.

A reply whose tool uses all call recall tools is answered at once and the model asked
again, up to MAX_RECALL_ROUNDS times within the turn. A reply that also calls the client's
tools returns with those open; the recall uses are answered together with the client's
results (submitToolResults), in the same tool message. A reply still calling recall tools
after the last round returns with them open too: submitToolResults with no results lets
the service answer them and go on.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from ..errors import BadInput
from ..model.blocks import tool_use_ids
from ..model.kinds import Role
from ..model.models import RECALLED_IDS
from ..recall.tools import DEFINITIONS, NAMES, answer, recall_uses
from ..store import Ledger, Node
from .requests import Options, Tool

MAX_RECALL_ROUNDS = 4
RECALL_TOOLS = tuple(Tool(d["name"], d["description"], d["input_schema"]) for d in DEFINITIONS)


def recall_options(options: Options, session_recall: bool) -> Options:
    """The options a model call is sent: with recall on, the recall tools follow the
    client's and the summary stand-ins name their ids."""
    if options.recall and all(t in options.tools for t in RECALL_TOOLS):
        return options  # resolved already
    if not (session_recall if options.recall is None else options.recall):
        return replace(options, recall=False)
    refuse_clash(options)
    return replace(options, tools=options.tools + RECALL_TOOLS, recall=True)


def refuse_clash(options: Options) -> None:
    clash = sorted(t.name for t in options.tools if t.name in NAMES)
    if clash:
        raise BadInput(f"tools {', '.join(clash)} are the recall tools' names; with recall on "
                       "the client's tools must be named otherwise")


def clashes(options: Options) -> bool:
    return options.recall is not False and any(t.name in NAMES for t in options.tools)


def service_uses(reply: Node | None, options: Options) -> tuple[str, ...]:
    """The reply's recall tool uses, when recall is on for it."""
    if reply is None or not options.recall:
        return ()
    return tuple(use.id for use in recall_uses(reply.blocks))


def only_recall(reply: Node, options: Options) -> bool:
    uses = service_uses(reply, options)
    return bool(uses) and len(uses) == len(tool_use_ids(reply.blocks))


async def answered(ledger: Ledger, reply: Node, given: Sequence[Any],
                   budget_tokens: int) -> tuple[list[Any], dict[str, Any] | None]:
    """`given` (the client's results) with the answers to the reply's recall uses they
    leave unanswered, and the tool message's metadata naming the turns those quote."""
    if reply.role is not Role.ASSISTANT:
        return list(given), None
    named = {r.get("tool_use_id") for r in given if isinstance(r, Mapping)}
    open_uses = [u for u in recall_uses(reply.blocks) if u.id not in named]
    if not open_uses:
        return list(given), None
    answers = [await answer(ledger, reply.session_id, reply.id, use, budget_tokens)
               for use in open_uses]
    recalled = list(dict.fromkeys(i for a in answers for i in a.recalled_ids))
    return [*given, *(a.block for a in answers)], {RECALLED_IDS: recalled} if recalled else None
