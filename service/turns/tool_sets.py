"""The session's tool set (docs/guides/tool-sets.md): setTools checks and stores a version; every
call the service makes or previews is offered the set in force at its head unless it
names its own tools."""
from __future__ import annotations

from typing import Any, Sequence

from ..model.models import tools_json
from ..store import Ledger, ToolSetVersion
from . import recall, requests
from .requests import Options


async def set_tools(ledger: Ledger, session_id: str, tools: Sequence[Any],
                    tool_choice: Any = None, head_id: str | None = None) -> ToolSetVersion:
    """A new version of the session's tool set (a branch's with `head_id`); the definitions
    are checked, BAD_INPUT before anything is written."""
    offered = requests.tool_definitions(tools)
    choice = requests.tool_choice(tool_choice, offered)
    return await ledger.tool_sets.set(
        session_id, tools_json(offered),
        None if choice is None else {"mode": choice.mode, "name": choice.name}, head_id)


async def offered(ledger: Ledger, session_id: str, head_id: str | None,
                  options: Options = Options()) -> Options:
    """`options` with the tools a call at `head_id` (None: HEAD) is offered: its own when it
    gave them, else the session's set in force there."""
    if options.names_tools:
        return options
    return with_version(options, await ledger.tool_sets.in_force(session_id, head_id))


def with_version(options: Options, version: ToolSetVersion | None) -> Options:
    """`options` with the tools of `version`, the set in force (None: no tools), unless
    they name their own."""
    if version is None:
        return requests.in_force(options, (), None)
    return requests.in_force(options, version.tools, version.tool_choice)


def read_with_the_append(options: Options) -> bool:
    """Whether a turn's opening append reads the set in force itself (one round trip, not
    two): when the turn names no tools and no toolChoice of its own (a toolChoice is checked
    against the set before anything is written)."""
    return not options.names_tools and options.tool_choice is None


def to_check(options: Options) -> tuple[str, ...]:
    """The names a set in force read with the append must not hold, or the turn checks it
    first: the recall tools', unless recall is off for the turn (recall.clashes)."""
    return () if options.recall is False else tuple(sorted(recall.NAMES))
