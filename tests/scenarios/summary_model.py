"""An independent model of the summary strategies ('rolling', 'branch' and 'segmented').

Written from the data model the change is specified by (which summary a head renders,
the capsule contract, where compaction cuts, deleteBranch, uncompact), in plain Python over
facts the tests read through the public API: node ids, roles, seqs, tokens, predecessors and
callers, which turns are pinned, and each summary's immutable facts as its compaction returned them (coverage,
retained ids, absorbed id, compacted head, seq, splice). Everything that changes — which
nodes and summaries are deleted or retired, where HEAD and the active-summary pointer are —
the model works out itself from the moves the scenario made. It imports nothing from the
service.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Turn:
    id: str
    role: str            # 'system' | 'user' | 'assistant' | 'tool' | 'carry'
    seq: int
    predecessor: str | None
    caller: str | None = None
    side: bool = False   # on a spawned side branch
    deleted: bool = False
    tokens: int = 0


@dataclass
class Summary:
    id: str
    seq: int
    splice: str                      # its predecessor: the node before covers[0]
    covers: tuple[str, ...]          # the whole segment, chain order
    retained: tuple[str, ...] | None
    absorbed: str | None
    replaced: str | None             # the active-summary pointer when it was written
    compacted_head: str
    strategy: str
    deleted: bool = False
    retired: bool = False
    tokens: int = 0
    nested: tuple[str, ...] = ()  # segmented: the summaries a nested summary merged

    @property
    def last(self) -> str:
        return self.covers[-1]


@dataclass
class SummaryModel:
    root: str
    strategy: str = "rolling"
    head: str = ""
    turns: dict[str, Turn] = field(default_factory=dict)
    summaries: dict[str, Summary] = field(default_factory=dict)
    # The session's ACTIVE_SUMMARY pointer: the latest compaction, until an uncompact walks
    # it back or a branch deletion takes its summary (then there is none).
    pointer: str | None = None
    pins: set[str] = field(default_factory=set)  # pinned turns (pin / unpin)
    # Carry nodes (branch summaries): each one's carried turns, chain order. A carry node is a
    # turn of its own chain (a Turn of role 'carry'), so the rule renders it in place.
    carried: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.head = self.head or self.root

    # ---- facts -------------------------------------------------------------------------
    def add_turn(self, turn: Turn) -> None:
        known = self.turns.get(turn.id)
        if known is not None:
            assert (known.role, known.seq, known.predecessor, known.caller) == (
                turn.role, turn.seq, turn.predecessor, turn.caller), (
                f"node {turn.id} changed: {known} -> {turn}")
            return
        assert turn.predecessor is None or turn.predecessor in self.turns, (
            f"node {turn.id} hangs off unknown {turn.predecessor}")
        self.turns[turn.id] = turn

    def live_turns(self) -> list[Turn]:
        return [t for t in self.turns.values() if not t.deleted]

    def live_summaries(self) -> list[Summary]:
        return [s for s in self.summaries.values() if not s.deleted]

    def candidate(self, sid: str | None) -> bool:
        return sid is not None and not self.summaries[sid].deleted \
            and not self.summaries[sid].retired

    def seq_of(self, node: str) -> int:
        return self.summaries[node].seq if node in self.summaries else self.turns[node].seq

    # ---- the DAG -----------------------------------------------------------------------
    def chain(self, head: str) -> list[str]:
        """ROOT .. head along PREDECESSOR (real turns only: nothing points at a summary)."""
        out = [head]
        while self.turns[out[-1]].predecessor is not None:
            out.append(self.turns[out[-1]].predecessor)
        assert out[-1] == self.root, f"{head} does not reach ROOT"
        return out[::-1]

    def depth(self, node: str) -> int:
        return len(self.chain(node)) - 1

    def user_children(self, node: str) -> list[str]:
        return [t.id for t in self.live_turns()
                if t.predecessor == node and not t.side]

    def tips(self) -> list[str]:
        """Live user-branch tips in seq order (summaries are not in `turns`)."""
        return sorted((t.id for t in self.live_turns()
                       if not t.side and not self.user_children(t.id)),
                      key=self.seq_of)

    def carry_segment(self, from_tip: str, into: str) -> list[str]:
        """What a carry-over from `from_tip` into `into` summarizes: from_tip's chain
        minus into's (the turns below their common ancestor)."""
        target = set(self.chain(into))
        return [n for n in self.chain(from_tip) if n not in target]

    # ---- the rule ----------------------------------------------------------------------
    def applies(self, sid: str, head: str) -> bool:
        s = self.summaries[sid]
        chain = self.chain(head)
        if s.last not in chain:
            return False
        if self.strategy == "rolling" or s.retained is None:
            return True
        below = chain[chain.index(s.last) + 1:]
        return all(n in s.retained or self.seq_of(n) > s.seq for n in below)

    def stand_ins(self, head: str) -> list[str]:
        """Segmented: `head`'s chain, ROOT first, with every segment a summary stands in for
        replaced by that summary. Up from the head: at a turn that ends the segment of live,
        unretired summaries, the newest of them stands in and the walk goes on from its
        splice; any other turn stands for itself."""
        chain = self.chain(head)
        out, i = [], len(chain) - 1
        while i >= 0:
            ending = [s for s in self.summaries.values()
                      if self.candidate(s.id) and s.last == chain[i]]
            if not ending:
                out.append(chain[i])
                i -= 1
                continue
            s = max(ending, key=lambda s: s.seq)
            first = chain.index(s.splice) + 1
            assert tuple(chain[first:i + 1]) == s.covers, (
                f"{s.id}'s coverage is not the chain segment after its splice {s.splice}")
            out.append(s.id)
            i = first - 1
        return out[::-1]

    def applicable(self, head: str) -> str | None:
        if self.strategy == "segmented":  # the last stand-in: the one nearest the head
            return next((n for n in reversed(self.stand_ins(head)) if n in self.summaries),
                        None)
        if self.strategy == "rolling":
            return self.pointer if self.candidate(self.pointer) and \
                self.applies(self.pointer, head) else None
        found = [s for s in self.summaries.values()
                 if self.candidate(s.id) and self.applies(s.id, head)]
        if not found:
            return None
        return max(found, key=lambda s: (self.depth(s.last), s.seq)).id

    def cut(self, head: str, keep: int) -> tuple[list[str], list[str]] | None:
        """Where compacting `head` with keepRecentTokens `keep` cuts what it renders: the
        turns it newly covers and the tail it retains; None when it writes nothing.

        The render after ROOT needs 4 entries. The summary standing in there is covered
        whatever the budget; of the turns after it, the tail kept is the longest run at the
        end whose tokens fit in `keep`, made to start at its first user turn or carry node (the
        turns before that are covered too). Nothing is written when that leaves no turn to
        cover. Pins count first: every pinned turn of the render (with the other half of its
        tool pair), covered or not, is charged to `keep` before the tail, and the tail's
        pinned turns cost nothing more.
        """
        view = self.render(head)[1:]
        if len(view) < 4:
            return None
        # Rolling and branch: the one summary leads the view. Segmented: the cut starts after
        # the last stand-in and its pinned turns; what renders before stays as it is.
        last = max((i for i, n in enumerate(view) if n in self.summaries), default=0)
        summary = view[last] if view[last] in self.summaries else None
        kept_after = self.kept(summary, head) if summary else []
        turns = view[last + 1 + len(kept_after):] if summary else view
        verbatim = set(kept_after) | {n for n in turns if n in self.pinned_with_pairs(turns)}
        start, kept = len(turns), sum(self.turns[n].tokens for n in verbatim)
        while start > 0:
            cost = 0 if turns[start - 1] in verbatim else self.turns[turns[start - 1]].tokens
            if kept + cost > keep:
                break
            start -= 1
            kept += cost
        if summary is None and start == 0:
            return None  # no summary and every turn fits
        start = next((i for i in range(start, len(turns))
                      if self.turns[turns[i]].role in ("user", "carry")), len(turns))
        return (turns[:start], turns[start:]) if start > 0 else None

    def pinned_with_pairs(self, segment: list[str]) -> set[str]:
        """The pinned turns of `segment` (chain order), each with the other half of its tool
        pair in it: a tool message answers the assistant message before it."""
        out = set()
        for i, node in enumerate(segment):
            if node not in self.pins:
                continue
            out.add(node)
            if self.turns[node].role == "tool" and i > 0:
                out.add(segment[i - 1])
            if i + 1 < len(segment) and self.turns[segment[i + 1]].role == "tool":
                out.add(segment[i + 1])
        return out

    def kept(self, sid: str, head: str) -> list[str]:
        """The covered turns rendered right after summary `sid`: its segment's pinned turns
        with their pair halves, in chain order."""
        covers = list(self.summaries[sid].covers)
        held = self.pinned_with_pairs(covers)
        return [n for n in covers if n in held]

    def render(self, head: str) -> list[str]:
        if self.strategy == "segmented":
            return [x for n in self.stand_ins(head)
                    for x in ([n] + self.kept(n, head) if n in self.summaries else [n])]
        chain = self.chain(head)
        sid = self.applicable(head)
        if sid is None:
            return chain
        s = self.summaries[sid]
        first, last = chain.index(s.splice) + 1, chain.index(s.last)
        assert tuple(chain[first:last + 1]) == s.covers, (
            f"{sid}'s coverage is not the chain segment after its splice {s.splice}")
        return chain[:first] + [sid] + self.kept(sid, head) + chain[last + 1:]

    def merge_due(self, head: str, merge_at: int) -> tuple[str, ...]:
        """Segmented, right after a compaction of `head`: the stand-ins merged into one nested
        summary. When the stand-ins' tokens pass `merge_at`, the oldest that follow one
        another in the render (no verbatim turn between them) are merged, from the first, at
        least two and never the newest, until the others hold at most half of `merge_at`."""
        listed = self.stand_ins(head)
        ids = [n for n in listed if n in self.summaries]
        total = sum(self.summaries[n].tokens for n in ids)
        if total <= merge_at or len(ids) <= 2:
            return ()
        run, rest = [], total
        for n in ids[:-1]:
            if run and listed.index(n) != listed.index(run[-1]) + 1:
                break
            run.append(n)
            rest -= self.summaries[n].tokens
            if len(run) >= 2 and rest <= merge_at // 2:
                break
        return tuple(run) if len(run) >= 2 else ()

    # ---- what the API shows ------------------------------------------------------------
    def active(self) -> str | None:
        """The active summary as the API names it."""
        return self.pointer

    def capsules(self) -> set[str]:
        if self.strategy == "rolling":
            return {self.pointer} if self.candidate(self.pointer) else set()
        if self.strategy == "segmented":
            return {n for tip in self.tips() for n in self.stand_ins(tip) if n in self.summaries}
        return {sid for sid in map(self.applicable, self.tips()) if sid is not None}

    def callers(self, node: str) -> set[str]:
        out, at = set(), self.turns[node].caller
        while at is not None:
            out.add(at)
            at = self.turns[at].caller
        return out

    def capsule_covers(self, sid: str) -> list[str]:
        """A capsule row's coversIds: each covered turn, then the live nodes whose CALLER chain
        reaches it (seq order), minus deleted ids."""
        out: list[str] = []
        for turn in self.summaries[sid].covers:
            if not self.turns[turn].deleted:
                out.append(turn)
            members = sorted((t.id for t in self.live_turns()
                              if t.id != turn and turn in self.callers(t.id)), key=self.seq_of)
            out += [m for m in members if m not in out]
        return out

    # ---- moves -------------------------------------------------------------------------
    def compacted(self, summary: Summary) -> None:
        summary.replaced = self.pointer
        self.summaries[summary.id] = summary
        self.pointer = summary.id

    def delete_branch(self, tip: str) -> tuple[str, set[str]]:
        """The branch's exclusive nodes (side branches below them included) and every
        summary whose segment holds one of them; HEAD to the fork point if it was there.
        Returns (fork point, deleted ids)."""
        top = tip
        while self.turns[top].predecessor != self.root and \
                len(self.user_children(self.turns[top].predecessor)) == 1:
            top = self.turns[top].predecessor
        fork = self.turns[top].predecessor
        doomed = {t.id for t in self.live_turns() if top in self.chain(t.id)}
        for node in doomed:
            self.turns[node].deleted = True
        gone = {s.id for s in self.live_summaries() if doomed & set(s.covers)}
        for sid in gone:
            self.summaries[sid].deleted = True
        if self.pointer in gone:
            self.pointer = None  # and the summary it replaced does not come back
        if self.head in doomed:
            self.head = fork
        return fork, doomed | gone

    def uncompact(self, sid: str) -> str | None:
        """Retires `sid`; when it held the pointer, the pointer goes to what was active
        before it. Returns the summary the pointer moved to (None when it did not move or
        moved to none).

        What was active before a summary is the one it replaced — or, when that one was
        undone since, what was active before that one, and so on. A summary a branch
        deletion took never comes back, and neither does anything it had replaced: had the
        deletion happened while it was active, nothing would have been active after it.
        """
        s = self.summaries[sid]
        assert self.candidate(sid), f"{sid} cannot be uncompacted"
        s.retired = True
        if self.pointer != sid:
            return None
        before = s.replaced
        while before is not None and self.summaries[before].retired:
            before = self.summaries[before].replaced
        if before is not None and self.summaries[before].deleted:
            before = None
        self.pointer = before
        return before
