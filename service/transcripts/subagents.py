"""Claude Code sub-agents as spawned side branches of the session that ran them.

Claude Code writes each sub-agent's transcript beside its session file, in
`<session>/subagents/agent-<id>.jsonl`, with a sidecar `agent-<id>.meta.json` naming the
tool use (`toolUseId`) that spawned it; the parent's tool_result for that tool use
carries the agent's final answer (and `toolUseResult.agentId`, the link when the sidecar
names none). How they map (docs/guides/importing-sessions.md): each agent's turns are
a side branch (never moving HEAD, never a branch tip) hanging from ROOT, since a
sub-agent reads its prompt, not its parent's conversation; every one of its nodes points
CALLER at the assistant message holding the tool use, as spawnTask's do at the node they
were spawned from. Internal compaction helpers (`agent-acompact-*`) are no sub-agents;
workflow agents (`subagents/workflows/…`) are not read.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from ..model import validate
from .claude_code import parse
from .model import ROOT_KEY, Mode, Transcript, Turn, tool_use_id

PREFIX = "agent-"
HELPERS = "agent-acompact-"


@dataclass(frozen=True)
class SubAgent:
    agent_id: str
    file: str
    text: str
    sidecar: dict[str, Any]


def beside(file: str, read_text: Callable[[str], str]) -> list[SubAgent]:
    """The sub-agents Claude Code keeps beside session file `file` (none for stdin)."""
    agents = []
    for path in agent_files(file):
        agent_id = path.stem[len(PREFIX):]
        meta_file = path.with_name(f"{path.stem}.meta.json")
        sidecar = validate.parse_json(read_text(str(meta_file)), str(meta_file)) \
            if meta_file.exists() else {}
        agents.append(SubAgent(agent_id, str(path), read_text(str(path)),
                               sidecar if isinstance(sidecar, dict) else {}))
    return agents


def agent_files(file: str) -> list[Path]:
    """The sub-agent transcripts beside session file `file` (none for stdin), in order."""
    if file == "-":
        return []
    folder = Path(file).with_suffix("") / "subagents"
    return [path for path in sorted(folder.glob(f"{PREFIX}*.jsonl"))
            if not path.name.startswith(HELPERS)]


def watched_files(file: str) -> list[Path]:
    """What a read of `file` reads beside it: its sub-agents' transcripts and sidecars."""
    files = agent_files(file)
    return files + [path.with_name(f"{path.stem}.meta.json") for path in files]


def with_agents(main: Transcript, agents: list[SubAgent], mode: Mode,
                settle: Callable[[Transcript], Transcript] | None = None) -> Transcript:
    """`main` with its agents' turns; `settle` cuts what of each may still grow (follow.py:
    a call without its result yet is held back, not stored with a stand-in result)."""
    return with_parsed(main, [(agent, parse(agent.text, agent.file, mode)) for agent in agents],
                       settle)


# A spawned turn made of an agent's turn, kept by the agent's turn key: (its Turn, the
# caller and agent facts it was made with, the spawned Turn).
Spawned = dict[str, tuple[Turn, str | None, dict[str, Any], Turn]]


def with_parsed(main: Transcript, agents: list[tuple[SubAgent, Transcript]],
                settle: Callable[[Transcript], Transcript] | None = None,
                spawned: Spawned | None = None) -> Transcript:
    """with_agents of agents parsed already; `spawned` (reading.py) keeps the spawned turns
    made before, so an agent's turn no line changed keeps its spawned Turn too."""
    turns = list(main.turns)
    uses = {b["id"]: t.key for t in reversed(main.turns) for b in t.blocks
            if b["type"] == "tool_use"}
    for agent, parsed in agents:
        turns += _spawned(main, agent, settle(parsed) if settle is not None else parsed,
                          uses, spawned if spawned is not None else {})
    return replace(main, turns=tuple(turns))


def _spawned(main: Transcript, agent: SubAgent, parsed: Transcript, uses: dict[str, str],
             spawned: Spawned) -> list[Turn]:
    raw = agent.sidecar.get("toolUseId")
    use = tool_use_id(raw) if isinstance(raw, str) else \
        main.meta.get("agent_tool_uses", {}).get(agent.agent_id)
    caller = uses.get(use)
    about = {"id": agent.agent_id, "tool_use_id": use, "linked": caller is not None,
             **{k: agent.sidecar[k] for k in ("agentType", "description", "spawnDepth")
                if k in agent.sidecar}}
    if parsed.compactions:
        about["compactions_not_imported"] = len(parsed.compactions)

    def key(k: str) -> str:
        return k if k == ROOT_KEY else f"{PREFIX}{agent.agent_id}/{k}"

    made = []
    for t in parsed.turns:
        name = key(t.key)
        kept = spawned.get(name)
        if kept is None or kept[0] is not t or kept[1] != caller or kept[2] != about:
            turn = replace(t, key=name, parent=key(t.parent), caller=caller, side_branch=True,
                           file=agent.file, meta={**t.meta, **({"agent": about}
                                                               if t.parent == ROOT_KEY else {})})
            kept = spawned[name] = (t, caller, about, turn)
        made.append(kept[3])
    return made
