"""Summary strategies end to end: 'rolling' and 'branch' over the public API, on a real
service and a real Neo4j, against an independent model (tests/scenarios/summary_model.py).

After every step `Dag.check` asks the service for HEAD, the node count, the active
summary, the branch list (with each branch's summary), the graph rows (the capsule
contract), the render of every live branch tip and of HEAD, and every summary the scenario
ever created (retired and deleted ones included), and compares each with what the model
says. Every compaction (manual, or automatic inside a turn) is checked against the render
it compacted (absorbed summary, coverage, retained tail, splice), every model call's reads
against the rule's render of its prompt head, and every uncompact and strategy change
against its mutation result and its event on sessionEvents.
"""
from __future__ import annotations

import asyncio

import pytest

from tests.api_client import Client
from tests.service_process import ServiceProcess
from tests.scenarios.summary_model import Summary, SummaryModel, Turn

KEEP = 130  # keepRecentTokens that retains about two exchanges (question + offline reply)
CHUNK = 15  # aliases per request (the API allows 20)

NODE = "id role seq depth predecessorId callerId sideBranch deleted tokens"
SUMMARY = ("id seq coversIds retainedIds absorbedId compactedHeadId retired deleted"
           " superseded strategy content")
TURN_COMPACTION = f"compaction {{ status summary {{ {SUMMARY} }} }} call {{ headId readIds }}"
EVENTS = ("subscription($s: ID!) { sessionEvents(sessionId: $s) { type sessionId"
          " ... on SummaryRetired { summaryId restoredSummaryId }"
          " ... on SummaryStrategyChanged { strategy } } }")
STATE = """query($s: ID!) { session(id: $s) {
  headId summaryStrategy activeSummaryId nodeCount
  activeSummary { id superseded retired deleted }
  branches { tip { id } isHead summaryId summary { id superseded retired deleted } }
  graph { nodes { id role seq predecessorId callerId isHead coversIds supersededSummary
    retired } }
  render { headId nodeIds summaryId }
} }"""


@pytest.fixture(scope="module")
def small_window(service):
    """A second service on the same tenant whose small context window makes turns compact
    by themselves (auto compaction at 80 % of 500 tokens, keeping 130)."""
    same = ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD", "CTXDAG_TENANT")
    with ServiceProcess({**{k: service.env[k] for k in same},
                         "CTXDAG_CONTEXT_WINDOW": "500",
                         "CTXDAG_KEEP_RECENT_TOKENS": str(KEEP)}) as process:
        yield process


def question(i: int) -> str:
    return f"Question {i:03d}. ".ljust(100, "x")


class Dag:
    """One session driven over GraphQL, with the model following every move."""

    def __init__(self, client: Client, session_id: str, root: dict, strategy: str) -> None:
        self.client = client
        self.id = session_id
        self.model = SummaryModel(root["id"], strategy)
        self.labels: dict[str, str] = {}
        self.auto: list[str] = []  # summaries written by automatic compaction
        self._learn(root)

    @classmethod
    async def start(cls, client: Client, title: str, strategy: str | None) -> "Dag":
        data = await client(
            f"mutation($t: String, $st: String) {{ createSession(title: $t, systemPrompt:"
            f" \"You are a scenario.\", summaryStrategy: $st) {{ id summaryStrategy"
            f" root {{ {NODE} }} }} }}", t=title, st=strategy)
        session = data["createSession"]
        assert session["summaryStrategy"] == (strategy or "rolling")
        return cls(client, session["id"], session["root"], session["summaryStrategy"])

    @property
    def strategy(self) -> str:
        return self.model.strategy

    # ---- labels, for readable failures ---------------------------------------------------
    def show(self, ids) -> str:
        if ids is None:
            return "None"
        if isinstance(ids, str):
            return f"{self.labels.get(ids, '?')}({ids[:8]})"
        return "[" + ", ".join(self.labels.get(i, i) for i in ids) + "]"

    def _learn(self, node: dict) -> str:
        role = node["role"].lower()
        turn = Turn(node["id"], role, node["seq"], node["predecessorId"], node["callerId"],
                    node["sideBranch"], tokens=node["tokens"])
        self.model.add_turn(turn)
        self.labels.setdefault(node["id"], f"{'R' if role == 'system' else role[0]}{node['seq']}")
        assert node["depth"] == self.model.depth(node["id"]), node
        assert node["deleted"] is False, node
        return node["id"]

    # ---- moves ---------------------------------------------------------------------------
    def _turn(self, turn: dict, prompt_head: str | None = None, advances: bool = True) -> str:
        """Learns a turn's nodes; a compaction it ran (auto) is checked like a manual one,
        compacted at the prompt's head. Returns the reply."""
        assert turn.get("error") is None, turn
        if turn["userNode"] is not None:
            prompt_head = self._learn(turn["userNode"])
        compaction = turn["compaction"]
        if compaction is not None and compaction["status"] != "SKIPPED":
            assert compaction["status"] == "COMPACTED", compaction
            self._compacted(compaction["summary"], prompt_head, KEEP,  # small_window's keep
                            *self._before(prompt_head))
            self.auto.append(compaction["summary"]["id"])
        # The model call read exactly what the rule renders from the prompt's head.
        expected = self.model.render(prompt_head)
        assert (turn["call"]["headId"], turn["call"]["readIds"]) == (prompt_head, expected), (
            f"the call answering {self.show(prompt_head)} read {self.show(turn['call']['readIds'])}"
            f", expected {self.show(expected)}")
        reply = self._learn(turn["reply"])
        assert turn["reply"]["predecessorId"] == prompt_head
        if advances:
            self.model.head = reply
        return reply

    async def say(self, text: str) -> tuple[str, str]:
        data = await self.client(
            f"mutation($s: ID!, $c: String!) {{ sendMessage(sessionId: $s, content: $c) {{"
            f" userNode {{ {NODE} }} reply {{ {NODE} }} error {TURN_COMPACTION} }} }}",
            s=self.id, c=text)
        turn = data["sendMessage"]
        assert turn["userNode"]["predecessorId"] == self.model.head
        reply = self._turn(turn)
        return turn["userNode"]["id"], reply

    async def chat(self, count: int, start: int = 0) -> list[str]:
        ids: list[str] = []
        for i in range(start, start + count):
            ids += await self.say(question(i))
        return ids

    async def edit(self, node: str, text: str) -> tuple[str, str]:
        data = await self.client(
            f"mutation($n: ID!, $c: String!) {{ editMessage(nodeId: $n, content: $c) {{"
            f" userNode {{ {NODE} }} reply {{ {NODE} }} error {TURN_COMPACTION} }} }}",
            n=node, c=text)
        turn = data["editMessage"]
        assert turn["userNode"]["predecessorId"] == self.model.turns[node].predecessor
        reply = self._turn(turn)
        return turn["userNode"]["id"], reply

    async def retry(self, reply: str) -> str:
        data = await self.client(
            f"mutation($n: ID!) {{ retry(nodeId: $n) {{ userNode {{ {NODE} }} reply {{ {NODE} }}"
            f" error {TURN_COMPACTION} }} }}", n=reply)
        turn = data["retry"]
        prompt = self.model.turns[reply].predecessor
        if turn["userNode"] is not None:  # the prompt it answers again, not a new node
            assert turn["userNode"]["id"] == prompt, turn
            turn = {**turn, "userNode": None}
        return self._turn(turn, prompt)

    async def checkout(self, node: str) -> None:
        data = await self.client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s,"
                                 " nodeId: $n) { headId } }", s=self.id, n=node)
        assert data["checkout"]["headId"] == node
        self.model.head = node

    async def rewind(self, node: str) -> None:
        data = await self.client("mutation($s: ID!, $n: ID!) { rewind(sessionId: $s,"
                                 " nodeId: $n) { headId } }", s=self.id, n=node)
        assert data["rewind"]["headId"] == node
        self.model.head = node

    async def delete(self, tip: str) -> set[str]:
        data = await self.client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s,"
                                 " tipId: $t) { headId } }", s=self.id, t=tip)
        _, gone = self.model.delete_branch(tip)
        assert data["deleteBranch"]["headId"] == self.model.head, "HEAD after deleteBranch"
        return gone

    async def spawn(self, from_node: str, prompt: str) -> tuple[str, str]:
        data = await self.client(
            f"mutation($s: ID!, $f: ID!, $p: String!) {{ spawnTask(sessionId: $s,"
            f" fromNodeId: $f, prompt: $p) {{ userNode {{ {NODE} }} reply {{ {NODE} }}"
            f" error {TURN_COMPACTION} }} }}", s=self.id, f=from_node, p=prompt)
        task = data["spawnTask"]
        return task["userNode"]["id"], self._turn(task, advances=False)

    def _before(self, at: str) -> tuple[list[str], str | None, int]:
        """What a compaction at `at` sees: the render, its summary, the newest seq."""
        m = self.model
        newest = max([t.seq for t in m.turns.values()] + [s.seq for s in m.summaries.values()])
        # Segmented relays no summary: the new one stands beside the earlier ones.
        relayed = None if m.strategy == "segmented" else m.applicable(at)
        return m.render(at), relayed, newest

    async def compact(self, keep: int = KEEP, head: str | None = None) -> str | None:
        """The new summary's id; None when the compaction was SKIPPED, as the model said."""
        at = head or self.model.head
        before = self._before(at)
        data = await self.client(
            f"mutation($s: ID!, $k: Int, $h: ID) {{ compact(sessionId: $s, keepRecentTokens: $k,"
            f" headId: $h) {{ status message summary {{ {SUMMARY} }} }} }}",
            s=self.id, k=keep, h=head)
        result = data["compact"]
        if self.model.cut(at, keep) is None:
            assert (result["status"], result["summary"]) == ("SKIPPED", None), (
                f"compacting {self.show(before[0])} at {self.show(at)} keeping {keep}: the"
                f" model writes nothing, the service said {result}")
            return None
        assert result["status"] == "COMPACTED", result
        return self._compacted(result["summary"], at, keep, *before)

    def _compacted(self, s: dict, at: str, keep: int, before: list[str], absorbed: str | None,
                   newest: int) -> str:
        """Checks a new summary's facts against the render its compaction saw: it absorbs
        the summary that applied to the head, covers that summary's segment extended by the
        turns the model's cut covers (a prefix of the rendered tail), retains the rest of the
        head's chain, and is spliced where the segment starts. Then the model takes it in."""
        m = self.model
        sid = s["id"]
        self.labels[sid] = f"S{s['seq']}"
        where = f"summary {self.show(sid)} compacted at {self.show(at)}"
        assert s["compactedHeadId"] == at, where
        assert s["absorbedId"] == absorbed, (
            f"{where}: absorbed {self.show(s['absorbedId'])}, the render it compacted was"
            f" {self.show(before)} (applicable {self.show(absorbed)})")
        assert s["strategy"] == m.strategy and not s["retired"] and not s["deleted"], (where, s)
        assert s["seq"] > newest, f"{where}: seq {s['seq']} is not the newest (> {newest})"
        covers = s["coversIds"]
        chain = m.chain(at)
        splice = chain[chain.index(covers[0]) - 1] if covers and covers[0] in chain else None
        assert splice is not None and chain[chain.index(splice) + 1:][:len(covers)] == covers, (
            f"{where}: coversIds {self.show(covers)} is not a segment of {self.show(chain)}")
        history = before[1:]  # the rendered view after ROOT: [absorbed?] + turns
        if m.strategy == "segmented":  # the turns after the last stand-in and its pins
            last = m.applicable(at)
            if last is not None:
                history = before[before.index(last) + 1 + len(m.kept(last, at)):]
        old: list[str] = []
        if absorbed is not None:  # it leads the view, unless an earlier segment's turns do
            assert absorbed in history, (where, self.show(history))
            history = history[history.index(absorbed):]
            old = list(m.summaries[absorbed].covers)  # its pinned turns follow it, covered
            history = [n for n in history[1:] if n not in old]
        assert covers[:len(old)] == old and len(covers) > len(old), (
            f"{where}: coversIds {self.show(covers)} does not extend {self.show(old)}")
        assert covers[len(old):] == history[:len(covers) - len(old)], (
            f"{where}: the newly covered {self.show(covers[len(old):])} is not a prefix of the"
            f" rendered tail {self.show(history)}")
        cut = m.cut(at, keep)
        assert cut is not None and covers[len(old):] == cut[0], (
            f"{where} keeping {keep}: newly covered {self.show(covers[len(old):])}, the model's"
            f" cut covers {self.show(cut and cut[0])}")
        retained = chain[chain.index(covers[-1]) + 1:]
        assert s["retainedIds"] == retained, (
            f"{where}: retainedIds {self.show(s['retainedIds'])}, expected {self.show(retained)}")
        assert not retained or m.turns[retained[0]].role in ("user", "carry"), (
            where, "tail opens a turn")
        m.compacted(Summary(sid, s["seq"], splice, tuple(covers), tuple(retained), absorbed,
                            None, at, m.strategy))
        assert s["superseded"] == (sid not in m.capsules()), (
            f"{where}: superseded={s['superseded']}, capsules {self.show(sorted(m.capsules()))}")
        return sid

    async def events_during(self, action, count: int = 1) -> tuple[dict, list[dict]]:
        ready = asyncio.Event()
        listener = asyncio.create_task(self.client.subscribe(EVENTS, {"s": self.id}, count,
                                                             ready))
        await ready.wait()
        result = await action()
        payloads = await listener
        assert all("errors" not in p and p.get("type") not in ("error", "complete")
                   for p in payloads), payloads
        return result, [p["data"]["sessionEvents"] for p in payloads]

    async def uncompact(self, sid: str) -> str | None:
        m = self.model
        head = m.head
        data, events = await self.events_during(lambda: self.client(
            "mutation($x: ID!) { uncompact(summaryId: $x) { summary { id retired superseded"
            " deleted } restoredSummaryId session { headId activeSummaryId } } }", x=sid))
        m.uncompact(sid)
        restored = m.active()  # the schema: "the session's active summary now"
        u = data["uncompact"]
        where = f"uncompact {self.show(sid)}"
        assert u["summary"] == {"id": sid, "retired": True, "superseded": True,
                                "deleted": False}, (where, u)
        assert u["restoredSummaryId"] == restored, (
            f"{where}: restoredSummaryId {self.show(u['restoredSummaryId'])},"
            f" expected {self.show(restored)}")
        assert u["session"]["headId"] == head, f"{where} moved HEAD"
        assert u["session"]["activeSummaryId"] == m.active(), (
            f"{where}: active {self.show(u['session']['activeSummaryId'])},"
            f" expected {self.show(m.active())}")
        assert events == [{"type": "SUMMARY_RETIRED", "sessionId": self.id, "summaryId": sid,
                           "restoredSummaryId": restored}], (where, events)
        return restored

    async def set_strategy(self, strategy: str) -> None:
        head = self.model.head
        data, events = await self.events_during(lambda: self.client(
            "mutation($s: ID!, $st: String) { updateSession(sessionId: $s, summaryStrategy: $st)"
            " { summaryStrategy headId activeSummaryId } }", s=self.id, st=strategy))
        self.model.strategy = strategy
        assert data["updateSession"] == {"summaryStrategy": strategy, "headId": head,
                                         "activeSummaryId": self.model.active()}
        assert events == [{"type": "SUMMARY_STRATEGY_CHANGED", "sessionId": self.id,
                           "strategy": strategy}], events

    # ---- reading -------------------------------------------------------------------------
    async def renders(self, heads: list[str]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for i in range(0, len(heads), CHUNK):
            part = heads[i:i + CHUNK]
            args = "".join(f", $h{j}: ID!" for j in range(len(part)))
            body = " ".join(f"r{j}: render(headId: $h{j}) {{ nodeIds summaryId }}"
                            for j in range(len(part)))
            data = await self.client(f"query($s: ID!{args}) {{ session(id: $s) {{ {body} }} }}",
                                     s=self.id, **{f"h{j}": h for j, h in enumerate(part)})
            out |= {h: data["session"][f"r{j}"] for j, h in enumerate(part)}
        return out

    async def nodes(self, ids: list[str]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for i in range(0, len(ids), CHUNK):
            part = ids[i:i + CHUNK]
            args = ", ".join(f"$n{j}: ID!" for j in range(len(part)))
            body = " ".join(f"n{j}: node(id: $n{j}) {{ ... on Message {{ {NODE} }} }}" for j in range(len(part)))
            data = await self.client(f"query({args}) {{ {body} }}",
                                     **{f"n{j}": n for j, n in enumerate(part)})
            out |= {n: data[f"n{j}"] for j, n in enumerate(part)}
        return out

    async def render_at(self, head: str | None = None) -> dict:
        data = await self.client("query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h)"
                                 " { nodeIds summaryId nodes { role content } } } }",
                                 s=self.id, h=head)
        return data["session"]["render"]

    async def check(self, head: str | None = None) -> dict:
        """Everything the service says about the session, against the model."""
        m = self.model
        if head is not None:
            assert m.head == head, "the scenario's own bookkeeping disagrees"
        tips = m.tips()
        session = (await self.client(STATE, s=self.id))["session"]
        renders = await self.renders(tips)
        summaries = await self.nodes(list(m.summaries))
        show = self.show

        assert session["headId"] == m.head, f"HEAD {show(session['headId'])}, expected" \
                                            f" {show(m.head)}"
        assert session["summaryStrategy"] == m.strategy
        written = len(m.turns) + len(m.summaries)  # every node ever written, deleted included
        assert session["nodeCount"] == written, (
            f"nodeCount {session['nodeCount']}, but {written} nodes were written")
        assert session["activeSummaryId"] == m.active(), (
            f"activeSummaryId {show(session['activeSummaryId'])}, expected {show(m.active())}")
        capsules = m.capsules()

        # Every summary ever created: deleted or not, its splice, its seq.
        for sid, node in summaries.items():
            s = m.summaries[sid]
            assert (node["deleted"], node["seq"], node["predecessorId"], node["role"],
                    node["depth"]) == (s.deleted, s.seq, s.splice, "SUMMARY",
                                       m.depth(s.splice) + 1), (
                f"summary {show(sid)}: deleted={node['deleted']}, expected {s.deleted}")

        # The graph rows: live turns and live (retired included) summaries; the capsule rule.
        rows = {r["id"]: r for r in session["graph"]["nodes"]}
        live = {t.id for t in m.live_turns()} | {s.id for s in m.live_summaries()}
        assert set(rows) == live, (
            f"graph rows: extra {show(sorted(set(rows) - live))},"
            f" missing {show(sorted(live - set(rows)))}")
        for rid, row in rows.items():
            assert row["isHead"] == (rid == m.head), f"isHead on {show(rid)}"
            if rid in m.turns:
                t = m.turns[rid]
                assert (row["role"].lower(), row["seq"], row["predecessorId"], row["callerId"],
                        row["coversIds"], row["supersededSummary"], row["retired"]) == (
                    t.role, t.seq, t.predecessor, t.caller, None, False, False), row
                continue
            s = m.summaries[rid]
            assert (row["role"], row["seq"], row["predecessorId"], row["retired"]) == (
                "SUMMARY", s.seq, s.splice, s.retired), (
                f"graph row of {show(rid)}: retired={row['retired']}, expected {s.retired}")
            if rid in capsules:
                assert row["supersededSummary"] is False and \
                    row["coversIds"] == m.capsule_covers(rid), (
                        f"capsule {show(rid)}: supersededSummary={row['supersededSummary']},"
                        f" coversIds {show(row['coversIds'])},"
                        f" expected {show(m.capsule_covers(rid))}")
            else:
                assert row["supersededSummary"] is True and row["coversIds"] is None, (
                    f"relic {show(rid)}: supersededSummary={row['supersededSummary']},"
                    f" coversIds {show(row['coversIds'])} (capsules: {show(sorted(capsules))})")

        # The branch list: each tip, whether it is HEAD, and which summary its tip renders.
        branches = {b["tip"]["id"]: b for b in session["branches"]}
        assert set(branches) == set(tips), (
            f"branches {show(sorted(branches))}, expected {show(tips)}")
        for tip in tips:
            b, expected = branches[tip], m.applicable(tip)
            assert b["isHead"] == (tip == m.head), f"isHead of branch {show(tip)}"
            assert b["summaryId"] == expected, (
                f"Branch {show(tip)}.summaryId {show(b['summaryId'])}, expected {show(expected)}")
            if expected is None:
                assert b["summary"] is None, b
            else:
                assert b["summary"] == {"id": expected, "superseded": False, "retired": False,
                                        "deleted": False}, (show(tip), b)

        # What every tip renders, and HEAD.
        for at, got in [*renders.items(), (m.head, session["render"])]:
            expected = m.render(at)
            assert (got["nodeIds"], got["summaryId"]) == (expected, m.applicable(at)), (
                f"{m.strategy} render of {show(at)}{' (HEAD)' if at == m.head else ''}:"
                f" got {show(got['nodeIds'])} (summary {show(got['summaryId'])}),"
                f" expected {show(expected)} (summary {show(m.applicable(at))})")

        active = session["activeSummary"]
        if m.active() is None:
            assert active is None, active
        else:
            assert active == {"id": m.active(), "superseded": m.active() not in capsules,
                              "retired": False, "deleted": False}, (
                f"activeSummary {active}, capsules {show(sorted(capsules))}")
        return {"session": session, "renders": renders, "summaries": summaries}


# ---- scenarios -----------------------------------------------------------------------------

def shape(render: dict) -> list[tuple[str, str]]:
    """A render without its ids: roles and contents in order (the summary's text included)."""
    return [(n["role"], n["content"]) for n in render["nodes"]]


async def test_a_linear_chain_renders_the_same_under_both_strategies(client, checked):
    """Same turns, compactions at the tip: both strategies render the same shape."""
    dags = [await Dag.start(client, f"linear {s}", s) for s in ("rolling", "branch")]
    checked.extend(d.id for d in dags)
    mains: dict[str, list[str]] = {d.strategy: [] for d in dags}

    async def both(step) -> None:
        for d in dags:
            await step(d, mains[d.strategy])
            await d.check(head=mains[d.strategy][-1])
        rolling, branch = [await d.render_at() for d in dags]
        assert shape(rolling) == shape(branch)
        for render in (rolling, branch):
            summary = render["summaryId"]
            assert summary is None or render["nodeIds"].index(summary) == 1

    def chat(n: int, start: int):
        async def step(d: Dag, main: list[str]) -> None:
            main += await d.chat(n, start)
        return step

    async def compact(d: Dag, main: list[str]) -> None:
        summary = await d.compact()
        assert d.model.applicable(main[-1]) == summary

    async def spawn(d: Dag, main: list[str]) -> None:
        await d.spawn(main[1], "Look into the first answer again.")  # folds into a capsule

    await both(chat(3, 0))
    await both(spawn)
    await both(chat(3, 3))
    await both(compact)
    await both(chat(3, 6))
    await both(compact)
    await both(chat(1, 9))
    await both(compact)
    for d in dags:
        render = await d.render_at()
        assert render["nodeIds"][:2] == [d.model.root, render["summaryId"]]
        assert len(render["nodeIds"]) < len(d.model.chain(d.model.head)) - 10
        covered = d.model.summaries[render["summaryId"]].covers
        assert d.model.capsule_covers(render["summaryId"]) != list(covered)  # the spawn folds in


async def test_a_fork_inherits_the_deepest_summary_on_its_own_path(client, checked):
    d = await Dag.start(client, "forks", "branch")
    checked.append(d.id)
    m = d.model
    main = await d.chat(6)
    s1 = await d.compact()
    await d.check(head=main[-1])
    main += await d.chat(4, start=6)
    await d.check(head=main[-1])
    s2 = await d.compact()
    await d.check(head=main[-1])
    S1, S2 = m.summaries[s1], m.summaries[s2]
    assert S2.absorbed == s1 and len(S2.covers) > len(S1.covers)
    replies = [n for n in main if m.turns[n].role == "assistant"]

    # Retried inside the old coverage: no summary's segment is on its chain; verbatim.
    inside = next(n for n in replies if n in S1.covers[1:])
    f0 = await d.retry(inside)
    await d.check(head=f0)
    assert m.applicable(f0) is None

    # Retried inside S2's coverage but after S1's: S1 is the deepest applicable summary.
    between = next(n for n in replies if n in S2.covers[len(S1.covers):])
    f1 = await d.retry(between)
    state = await d.check(head=f1)
    assert state["session"]["render"]["summaryId"] == s1
    assert len(state["session"]["render"]["nodeIds"]) < len(m.chain(f1))

    # An edit of a user message S2 retained: the fork inherits S2.
    kept_user = next(n for n in S2.retained if m.turns[n].role == "user")
    edited = await d.edit(kept_user, "Question 008, edited. ".ljust(100, "x"))
    state = await d.check(head=edited[1])
    assert state["session"]["render"]["summaryId"] == s2
    assert state["session"]["render"]["nodeIds"][:2] == [m.root, s2]

    # A checkout of a turn S2 covered (S1 did not) and a new message there: inherits S1.
    await d.checkout(between)
    await d.check(head=between)
    grown = list(await d.say(question(50)))
    state = await d.check(head=grown[1])
    assert state["session"]["render"]["summaryId"] == s1

    # Compacting that fork absorbs S1 — what applies there — not the active S2.
    grown += await d.chat(3, start=51)
    await d.check(head=grown[-1])
    main_before = (await d.renders([main[-1]]))[main[-1]]
    s3 = await d.compact()
    state = await d.check(head=grown[-1])
    assert m.summaries[s3].absorbed == s1
    assert state["renders"][main[-1]] == main_before == {"nodeIds": m.render(main[-1]),
                                                         "summaryId": s2}

    # Retry at the tip after S2: the new sibling inherits S2.
    tip_retry = await d.retry(main[-1])
    state = await d.check(head=tip_retry)
    assert state["session"]["render"]["summaryId"] == s2

    # HEAD inside the old coverage renders verbatim; a spawned task there reads verbatim too,
    # one hanging off a turn S2 retained reads S2.
    covered_user = next(n for n in S1.covers if m.turns[n].role == "user")
    await d.checkout(covered_user)
    await d.check(head=covered_user)
    await d.spawn(covered_user, "Dig into this.")
    await d.spawn(kept_user, "And into this.")
    await d.check(head=covered_user)

    # Deleting the fork that compacted S3 takes S3 along, never S1 it absorbed; deleting a
    # fork that only inherited S1 leaves S1 alone.
    gone = await d.delete(grown[-1])
    assert s3 in gone and s1 not in gone
    await d.check(head=covered_user)
    gone = await d.delete(f1)
    assert gone == {f1}
    state = await d.check(head=covered_user)
    assert not m.summaries[s1].deleted


async def test_compacting_one_branch_never_changes_another(client, checked):
    d = await Dag.start(client, "two branches", "branch")
    checked.append(d.id)
    m = d.model
    trunk = await d.chat(3)
    a = trunk + await d.chat(2, start=10)
    await d.checkout(trunk[-1])
    b = trunk + await d.chat(2, start=20)
    await d.check(head=b[-1])

    async def compact_keeping(branch: list[str], other: list[str], head: str | None) -> str:
        before = await d.check()
        summary = await d.compact(head=head)
        after = await d.check()
        assert after["renders"][other[-1]] == before["renders"][other[-1]], (
            f"compacting at {d.show(branch[-1])} changed what {d.show(other[-1])} renders")
        assert after["renders"][branch[-1]]["summaryId"] == summary
        return summary

    sa1 = await compact_keeping(a, b, head=a[-1])            # HEAD is on B: compact by headId
    assert m.summaries[sa1].absorbed is None
    # A's summary reaches into the trunk B shares; B existed already, so it never inherits it.
    assert m.summaries[sa1].last in m.chain(b[-1]) and m.applicable(b[-1]) is None
    sb1 = await compact_keeping(b, a, head=None)             # B is HEAD's branch
    assert m.summaries[sb1].absorbed is None
    # Both cover the shared trunk alone: a fork made now inherits one of them, the later.
    assert m.summaries[sa1].covers == m.summaries[sb1].covers == tuple(trunk)
    await d.checkout(trunk[-1])
    late = await d.say(question(40))
    state = await d.check(head=late[1])
    assert state["session"]["render"]["summaryId"] == sb1

    await d.checkout(a[-1])
    a += await d.chat(3, start=12)
    await d.check(head=a[-1])
    sa2 = await compact_keeping(a, b, head=None)
    assert m.summaries[sa2].absorbed == sa1

    b += [await d.retry(b[-1])]                              # HEAD to a new sibling on B
    await d.check(head=b[-1])
    assert m.applicable(b[-1]) == sb1
    b += await d.chat(3, start=22)
    await d.check(head=b[-1])
    sb2 = await compact_keeping(b, a, head=b[-1])
    assert m.summaries[sb2].absorbed == sb1

    await d.checkout(a[-1])
    a += await d.chat(2, start=15)
    sa3 = await compact_keeping(a, b, head=None)
    assert m.summaries[sa3].absorbed == sa2
    state = await d.check(head=a[-1])
    summaries = {b["tip"]["id"]: b["summaryId"] for b in state["session"]["branches"]}
    assert summaries[a[-1]] == sa3 and summaries[b[-1]] == sb2


async def test_uncompact_restores_what_applied_before(client, checked):
    for strategy in ("rolling", "branch"):
        d = await Dag.start(client, f"uncompact {strategy}", strategy)
        checked.append(d.id)
        m = d.model
        main = await d.chat(6)
        s1 = await d.compact()
        main += await d.chat(3, start=6)
        s2 = await d.compact()
        await d.check(head=main[-1])

        assert await d.uncompact(s2) == s1                    # the pointer moves back to S1
        state = await d.check(head=main[-1])
        assert state["session"]["activeSummaryId"] == s1
        assert state["session"]["render"]["summaryId"] == s1  # what applied before applies

        main += await d.chat(1, start=9)
        s3 = await d.compact()
        assert m.summaries[s3].absorbed == s1
        await d.check(head=main[-1])

        assert await d.uncompact(s1) == s3                    # not the active one: no move
        state = await d.check(head=main[-1])
        assert state["session"]["render"]["summaryId"] == s3
        assert state["session"]["activeSummaryId"] == s3

        # S3 replaced S1 (retired), S1 replaced nothing and absorbed nothing: no active left.
        assert await d.uncompact(s3) is None
        state = await d.check(head=main[-1])
        assert state["session"]["activeSummaryId"] is None
        assert state["session"]["render"]["nodeIds"] == m.chain(main[-1])

        for sid in (s1, s2, s3):                              # retired: not again
            errors = await client.errors("mutation($x: ID!) { uncompact(summaryId: $x) {"
                                         " restoredSummaryId } }", x=sid)
            assert errors[0]["extensions"]["code"] in ("BAD_INPUT", "CONFLICT"), errors
        await d.check(head=main[-1])
        errors = await client.errors("mutation($x: ID!) { uncompact(summaryId: $x) {"
                                     " restoredSummaryId } }", x=main[0])  # not a summary
        assert errors[0]["extensions"]["code"] in ("BAD_INPUT", "NOT_FOUND"), errors
        errors = await client.errors("mutation { uncompact(summaryId: \"no-such-summary\") {"
                                     " restoredSummaryId } }")
        assert errors[0]["extensions"]["code"] == "NOT_FOUND", errors
        await d.check(head=main[-1])


async def test_uncompact_walks_back_past_retired_and_to_other_branches(client, checked):
    d = await Dag.start(client, "uncompact across branches", "branch")
    checked.append(d.id)
    m = d.model
    trunk = await d.chat(2)
    a = trunk + await d.chat(3, start=10)
    await d.checkout(trunk[-1])
    b = trunk + await d.chat(3, start=20)
    sa = await d.compact(head=a[-1])
    sb = await d.compact()                                    # B's; replaced SA, absorbed none
    await d.check(head=b[-1])
    assert m.summaries[sb].absorbed is None and m.summaries[sb].replaced == sa

    a_before = (await d.renders([a[-1]]))[a[-1]]
    assert await d.uncompact(sb) == sa                        # back to A's summary
    state = await d.check(head=b[-1])
    assert state["renders"][a[-1]] == a_before                # A untouched
    assert state["session"]["render"]["summaryId"] is None    # B verbatim again

    b += await d.chat(2, start=23)
    sb2 = await d.compact()
    assert m.summaries[sb2].absorbed is None                  # SB is retired: nothing applies
    await d.check(head=b[-1])
    assert await d.uncompact(sa) == sb2                       # not the active one
    state = await d.check(head=b[-1])
    assert state["session"]["render"]["summaryId"] == sb2
    assert state["renders"][a[-1]]["summaryId"] is None
    assert await d.uncompact(sb2) is None                     # SA, SB retired: none
    await d.check(head=b[-1])


async def test_delete_branch_takes_its_summary_along(client, checked):
    d = await Dag.start(client, "delete under a branch summary", "branch")
    checked.append(d.id)
    m = d.model
    trunk = await d.chat(1)
    a = trunk + await d.chat(4, start=10)
    await d.checkout(trunk[-1])
    c = trunk + await d.chat(3, start=30)
    await d.checkout(trunk[-1])
    b = trunk + await d.chat(4, start=20)
    sa = await d.compact(head=a[-1])
    sc = await d.compact(head=c[-1])
    sb = await d.compact()
    await d.check(head=b[-1])
    assert set(m.summaries[sb].covers) & set(b[2:]), "B's summary covers B's own turns"

    before = await d.check(head=b[-1])
    gone = await d.delete(b[-1])                              # HEAD was on B: to the trunk
    assert sb in gone and not {sa, sc} & gone
    after = await d.check(head=trunk[-1])
    for tip in (a[-1], c[-1]):
        assert after["renders"][tip] == before["renders"][tip]
    assert after["session"]["activeSummaryId"] is None        # the active one went with B

    # Nothing is active: undoing a summary that is not moves nothing.
    assert await d.uncompact(sc) is None
    await d.check(head=trunk[-1])

    # A compaction on A absorbs SA and replaces none; undoing it makes none active (SB was
    # the last active one: what it replaced does not come back), while SA, live, applies to
    # A again.
    await d.checkout(a[-1])
    a += await d.chat(2, start=14)
    sa2 = await d.compact()
    assert m.summaries[sa2].absorbed == sa and m.summaries[sa2].replaced is None
    await d.check(head=a[-1])
    assert await d.uncompact(sa2) is None
    state = await d.check(head=a[-1])
    assert state["session"]["render"]["summaryId"] == sa
    assert state["session"]["activeSummaryId"] is None

    await d.delete(a[-1])
    state = await d.check(head=trunk[-1])
    assert m.summaries[sa].deleted and m.summaries[sa2].deleted
    assert state["session"]["activeSummaryId"] is None
    assert state["session"]["render"]["nodeIds"] == m.chain(trunk[-1])


async def test_a_deleted_summary_never_becomes_active_again(client, checked):
    """Issue 22, item 11, and its variants: whether the branch deletion takes the active
    summary or one a later compaction replaced, neither it nor what it replaced comes back
    through an uncompact; summaries undone before are walked past."""
    for strategy in ("rolling", "branch"):
        d = await Dag.start(client, f"deleted active {strategy}", strategy)
        checked.append(d.id)
        m = d.model
        main = await d.chat(2)
        s3 = await d.compact(keep=1)
        fork = list(await d.edit(main[2], "Question 001, edited. ".ljust(100, "x")))
        s5 = await d.compact(keep=1)                          # replaces S3
        await d.check(head=fork[-1])
        assert await d.delete(fork[-1]) == {*fork, s5}
        state = await d.check(head=main[1])
        assert state["session"]["activeSummaryId"] is None
        await d.checkout(main[-1])
        if strategy == "branch":                              # S3 still applies to main
            main += await d.chat(2, start=10)
        s7 = await d.compact(keep=1)
        assert m.summaries[s7].replaced is None
        await d.check(head=main[-1])
        assert await d.uncompact(s7) is None                  # not S3
        await d.check(head=main[-1])
        assert not m.summaries[s3].retired

        # SB, deleted after SM replaced it, had replaced SX: undoing SM restores neither.
        # Had SB been undone before it went, undoing SM restores SX, what was active before.
        for undone_first in (False, True):
            main += await d.chat(2, start=20 + 10 * undone_first)
            sx = await d.compact(keep=1)
            b = list(await d.edit(main[2], f"Question 001, again {undone_first}. ".ljust(100, "x")))
            sb = await d.compact(keep=1)
            await d.checkout(main[-1])
            main += await d.chat(2, start=25 + 10 * undone_first)
            sm = await d.compact(keep=1)
            assert (m.summaries[sb].replaced, m.summaries[sm].replaced) == (sx, sb)
            await d.check(head=main[-1])
            if undone_first:
                assert await d.uncompact(sb) == sm                # not active: no move
            await d.delete(b[-1])
            assert m.summaries[sb].deleted and not m.summaries[sx].deleted
            await d.check(head=main[-1])
            assert await d.uncompact(sm) == (sx if undone_first else None)
            await d.check(head=main[-1])


async def test_the_previous_summary_is_covered_though_the_turns_after_it_fit(client, checked):
    """Issue 22, item 12: the view [S9, a11, u13, a13] compacts with the default keep into
    S9's segment and a11, retaining [u13, a13]; once the first turn after the summary opens
    a tail that fits, there is nothing new to cover."""
    default_keep = 20_000
    for strategy in ("branch", "rolling"):
        d = await Dag.start(client, f"summary-led view {strategy}", strategy)
        checked.append(d.id)
        m = d.model
        main = await d.chat(3)
        s9 = await d.compact(keep=1, head=main[4])             # its segment ends on a user turn
        assert m.summaries[s9].last == main[4]
        a11 = await d.retry(main[5])
        u13, a13 = await d.say(question(13))
        assert d.model.render(a13)[1:] == [s9, a11, u13, a13]
        s = await d.compact(keep=default_keep)
        assert s is not None and m.summaries[s].covers == (*main[:5], a11)
        assert m.summaries[s].retained == (u13, a13)
        await d.check(head=a13)
        await d.say(question(15))
        assert await d.compact(keep=default_keep) is None      # SKIPPED
        await d.check()


async def test_compacting_at_an_interior_head(client, checked):
    for strategy in ("rolling", "branch"):
        d = await Dag.start(client, f"interior head {strategy}", strategy)
        checked.append(d.id)
        main = await d.chat(6)
        await d.rewind(main[7])
        await d.check(head=main[7])
        s = await d.compact()
        state = await d.check(head=main[7])
        assert state["session"]["render"]["summaryId"] == s
        # rolling: the longer branch holds the segment and renders S; branch: it existed
        # past the compacted head when S was written, so it does not.
        assert state["renders"][main[-1]]["summaryId"] == (s if strategy == "rolling" else None)
        fork = await d.chat(1, start=40)                     # a fork made later inherits S
        state = await d.check(head=fork[-1])
        assert state["session"]["render"]["summaryId"] == s


async def test_a_restart_changes_no_render(client, service, checked):
    dags = []
    for strategy in ("rolling", "branch"):
        d = await Dag.start(client, f"restart {strategy}", strategy)
        checked.append(d.id)
        dags.append(d)
        trunk = await d.chat(4)
        await d.compact()
        a = trunk + await d.chat(2, start=10)
        s2 = await d.compact()
        await d.checkout(trunk[5])
        b = list(await d.say(question(20)))
        b += await d.chat(2, start=21)
        await d.compact()
        await d.retry(a[-1])
        if strategy == "branch":
            await d.uncompact(s2)
        await d.checkout(b[-1])
    before = [await d.check() for d in dags]
    service.restart()
    after = [await d.check() for d in dags]
    assert after == before


async def test_switching_strategy_changes_renders_only_as_the_model_says(client, checked):
    d = await Dag.start(client, "switch", None)
    checked.append(d.id)
    m = d.model
    assert m.strategy == "rolling"
    trunk = await d.chat(3)
    a = trunk + await d.chat(2, start=10)
    await d.checkout(trunk[-1])
    b = trunk + await d.chat(2, start=20)
    await d.set_strategy("branch")
    await d.check(head=b[-1])
    await d.compact(head=a[-1])
    await d.compact()
    await d.checkout(trunk[3])
    c = trunk[:4] + list(await d.say(question(30)))
    await d.check(head=c[-1])

    for strategy in ("rolling", "branch", "rolling"):
        before = await d.check(head=c[-1])
        expected_before = {t: m.render(t) for t in m.tips()}
        await d.set_strategy(strategy)
        after = await d.check(head=c[-1])
        changed = {t for t in m.tips() if m.render(t) != expected_before[t]}
        assert {t for t in m.tips() if after["renders"][t] != before["renders"][t]} == changed
        # Both summaries cover the trunk alone; rolling knows only the active one (B's), so
        # A's tip swaps its own summary for B's, and back.
        assert changed == {a[-1]}
    # Under rolling: a compaction absorbs the active summary only where it applies.
    await d.checkout(a[-1])
    a += await d.chat(2, start=12)
    s = await d.compact()
    await d.check(head=a[-1])
    assert m.summaries[s].strategy == "rolling"
    await d.set_strategy("branch")
    await d.check(head=a[-1])


async def test_an_unknown_strategy_is_refused(client):
    errors = await client.errors("mutation { createSession(summaryStrategy: \"nested\") { id } }")
    assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors
    d = await Dag.start(client, "refuse", "branch")
    errors = await client.errors("mutation($s: ID!) { updateSession(sessionId: $s,"
                                 " summaryStrategy: \"nested\") { id } }", s=d.id)
    assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors
    await d.check()


async def test_automatic_compaction_follows_the_same_rule(small_window, checked):
    """Turns compact by themselves (the summary comes back with the turn): on a fork the
    automatic compaction absorbs what applies there, and other branches never change."""
    client = Client(small_window.url)
    for strategy in ("rolling", "branch"):
        d = await Dag.start(client, f"auto {strategy}", strategy)
        checked.append(d.id)
        m = d.model
        main = await d.chat(12)
        await d.check(head=main[-1])
        assert len(d.auto) >= 2, "main should have compacted by itself at least twice"
        first = d.auto[0]
        kept = next(n for n in m.summaries[first].retained if m.turns[n].role == "user")
        others = (await d.check())["renders"]
        fork = list(await d.edit(kept, "Question 004, edited. ".ljust(100, "x")))
        fork += await d.chat(6, start=60)
        state = await d.check(head=fork[-1])
        on_fork = [m.summaries[x] for x in d.auto if m.summaries[x].compacted_head in fork]
        assert on_fork, "no automatic compaction on the fork"
        # rolling: the active summary (main's latest) does not apply on the fork; branch: the
        # fork inherited main's first summary, and main renders as it did.
        assert on_fork[0].absorbed == (first if strategy == "branch" else None)
        if strategy == "branch":
            assert state["renders"][main[-1]] == others[main[-1]]
        retried = await d.retry(main[-1])
        await d.check(head=retried)
