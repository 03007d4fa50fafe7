"""A transcript file's read, kept to be grown: what `read` does once, and what a followed
file (follow.py) does again at each growth, parsing only the lines it gained.

A `Reading` is fed a file's text, complete lines at a time (`feed`), and builds the backup
document of all it was fed so far (`document`). Each line is parsed into JSON once: the
format's parse takes it (kept between feeds: parsing the lines a file gains continues it
where it stopped, claude_code.Parsing, pi.Parsing, codex.Parsing) and the session's origin
reads it (origin.py, into the facts the earlier lines gave). The document reuses the rows
it built for turns no new line changed (document.Memo), and the sub-agent files beside a
Claude Code session are read the same way, each continued when it only grew.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from ..model.validate import Limits
from . import claude_code, codex, origin, pi, subagents
from .building import Building
from .document import Memo, Plan, document, plan
from .jsonl import line_count, objects, text_parts
from .model import Degraded, Mode, Transcript, Turn, no_turns
from .spill import Spill, opened as spill_file


class _Parsing(Protocol):
    turns: list[Building]  # the turns being built, in file order
    made: list[Turn]  # the Turns made of them (building.turns_of)
    def take(self, line: int, entry: dict[str, Any]) -> None: ...
    def transcript(self) -> Transcript: ...


# Each format's parse, continued with the lines a file gains.
PARSINGS: dict[str, Callable[[str, Mode], _Parsing]] = {
    claude_code.TOOL: claude_code.Parsing, pi.TOOL: pi.Parsing, codex.TOOL: codex.Parsing}


# The last turns parsed, which the next part's lines may still change, are not set aside
# (a turn set aside and read again is taken back: this only saves reading it back).
LIVE_TURNS = 64


@dataclass
class _Side:
    """A sub-agent file's read: the text parsed, its parse, what parsing it degraded."""

    text: str
    lines: int
    parsing: _Parsing
    degraded: list[Degraded]


@dataclass
class Reading:
    """One file of format `tool`, as read so far. `strict`: a line the read cannot map is
    refused (BadInput naming it) rather than degraded. A feed or document that raises
    leaves the Reading unusable: read the file again in a new one."""

    file: str
    tool: str
    tenant: str
    limits: Limits
    strict: bool = False
    lines: int = 0  # lines fed (numbering the next feed's)
    parsed: int = 0  # lines parsed, the sub-agents' too: what tests count
    facts: origin.Facts = field(default_factory=origin.Facts)
    degraded: list[Degraded] = field(default_factory=list)  # by parsing what was fed
    memo: Memo = field(default_factory=Memo)
    # Where the turns parsed are set aside (spill.py), if anywhere.
    spill: Spill | None = None
    _parsing: _Parsing = field(init=False)
    _aside: int = 0  # the turns set aside so far
    _sides: dict[str, _Side] = field(default_factory=dict)
    _spawned: subagents.Spawned = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._parsing = PARSINGS[self.tool](self.file, Mode(self.strict, self.degraded))

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        if not self.memo.rows and "_parsing" in state:
            # Kept (kept.py) with no row to take by its Turn (document.Memo): its Turns are
            # made again of its turns by the next document, not packed.
            parsing = copy.copy(self._parsing)
            parsing.made = []
            state["_parsing"] = parsing
        return state

    def feed(self, text: str) -> None:
        """The lines the file gained: `text` begins where the text fed before ended, at a
        line's start (and ends at a line's end, unless no more is fed). A long text is
        read a part at a time: its lines' objects are held one part at a time, not all."""
        for part in text_parts(text):
            self._feed(part)

    def _feed(self, text: str) -> None:
        start, self.lines = self.lines + 1, self.lines + line_count(text)
        entries = list(objects(text, self.file, Mode(self.strict, self.degraded), start))
        for line, entry in entries:
            self._parsing.take(line, entry)
        self.parsed += len(entries)
        origin.READERS[self.tool](entries, self.facts)
        if self.spill is not None:
            self._set_aside()

    def _set_aside(self) -> None:
        """The turns parsed so far set aside, but the last LIVE_TURNS (a response split
        around its tool results adds to one); a turn a later part reads again stays in
        memory, which only costs memory."""
        assert self.spill is not None
        if self.spill.read_only:  # a kept reading's (kept.py): its growth's turns go to another
            fresh = spill_file()
            if fresh is None:
                return
            self.spill = fresh
        turns = self._parsing.turns
        settled = max(self._aside, len(turns) - LIVE_TURNS)
        for building in turns[self._aside:settled]:
            self.spill.set_aside(building)
        self._aside = settled

    def transcript(self, mode: Mode) -> Transcript:
        """All that was fed, parsed; what the parse degraded is added to `mode`."""
        mode.degraded.extend(self.degraded)
        return self._parsing.transcript()

    def document(self, mode: Mode, agents: list[subagents.SubAgent] | None = None,
                 settle: Callable[[Transcript], Transcript] | None = None,
                 named: str | None = None) -> dict[str, Any]:
        """The backup document of all that was fed, with `agents` (the sub-agent files
        beside a Claude Code session, read whole: each is parsed on from where its last
        read stopped when it only grew); `settle` cuts what may still grow (follow.py);
        `named`: the title the tool keeps beside the file (codex_names.py); what the read
        degrades is added to `mode`."""
        transcript = self._settled(mode, agents, settle)
        return document(transcript, self.tenant, self.limits, self._source(transcript, named),
                        mode, self.memo)

    def plan(self, mode: Mode, agents: list[subagents.SubAgent] | None = None,
             settle: Callable[[Transcript], Transcript] | None = None,
             keep_rows: bool = False, last: bool = False, named: str | None = None) -> Plan:
        """`document`'s Plan (document.py), its rows built a part at a time (a large file's
        first import: streamed.py), kept in the memo only with `keep_rows` (a followed
        file's, which the next document takes); `settle` and `named` as for `document`.
        `last`: the Reading is kept nowhere, so its parse is let go before the plan lays
        out the turns (which are all its rows need), and it is unusable after."""
        transcript = self._settled(mode, agents, settle)
        if last:
            del self._parsing, self._sides
        return plan(transcript, self.tenant, self.limits, self._source(transcript, named), mode,
                    self.memo if keep_rows else None)

    def _settled(self, mode: Mode, agents: list[subagents.SubAgent] | None,
                 settle: Callable[[Transcript], Transcript] | None) -> Transcript:
        transcript = self.transcript(mode)
        if agents:
            transcript = subagents.with_parsed(
                transcript, [(agent, self._side(agent, mode)) for agent in agents], settle,
                self._spawned)
        if settle is not None:
            transcript = settle(transcript)
            if not transcript.turns:
                raise no_turns(self.file)
        return transcript

    def _source(self, transcript: Transcript, named: str | None) -> dict[str, Any]:
        return origin.describe(transcript, (), self.facts, named)

    def _side(self, agent: subagents.SubAgent, mode: Mode) -> Transcript:
        side = self._sides.get(agent.file)
        grown = side is not None and agent.text.startswith(side.text) and \
            (not side.text or side.text.endswith("\n"))
        if not grown:
            degraded: list[Degraded] = []
            side = _Side("", 0, claude_code.Parsing(agent.file, Mode(self.strict, degraded)),
                         degraded)
            self._sides[agent.file] = side
        added = agent.text[len(side.text):]
        for line, entry in objects(added, agent.file, Mode(self.strict, side.degraded),
                                   side.lines + 1):
            side.parsing.take(line, entry)
            self.parsed += 1
        side.text, side.lines = agent.text, side.lines + line_count(added)
        mode.degraded.extend(side.degraded)
        return side.parsing.transcript()
