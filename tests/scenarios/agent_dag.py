"""Agent conversations over the public GraphQL API, and what every head must render.

`AgentDag` drives one session through the agent moves (messages, assistant replies that
call tools, their results, the offline model's tool loop, cancel, retry, edit, checkout,
rewind, deleteBranch, compact, uncompact, strategy changes) and follows each in two
independent models:

- `SummaryModel` (tests/scenarios/summary_model.py): which nodes each head renders, from
  the facts the API returned (ids, predecessors, each summary's coverage);
- the tool uses of every message, as this driver wrote them (or as the offline model's
  documented rule says it calls them): a head leaves open exactly the tool uses of its
  own node when that node is an assistant message. No compaction may change that.

A write the tool-pair rule forbids is predicted here from those facts alone and must be
refused with BAD_INPUT naming the ids, changing nothing (nodeCount and HEAD compared).

`check()` runs after every step: HEAD, nodeCount, the branch list, and for every live tip
and HEAD its render: each message answers exactly the tool uses of the one before it (no
orphan result, no unanswered use but the head's own), and its ids, summary and
openToolUseIds are what the models say; a head with open
tool uses must have `request` refused with BAD_INPUT naming them (and its predecessor's
render must be a valid request), every other head's Anthropic and OpenAI bodies must pass
tests/provider_requests.py; and the ledger's own invariant check (`ctxdag check`'s) must
find nothing in the session. A compaction's summary must not end on a message whose tool
uses it leaves to be answered outside it (a cut inside a tool pair).
"""
from __future__ import annotations

import re
from typing import Any

from service.store import Ledger
from tests.api_client import Client, GraphQLErrors
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai
from tests.scenarios.summary_model import Summary, SummaryModel, Turn

TOOL = "lookup"
TOOLS = [{"name": TOOL, "description": "Looks a word up.",
          "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}},
                          "required": ["word"]}}]
NODE = ("id role seq depth predecessorId callerId sideBranch deleted tokens content"
        " toolUseIds")
TURN = (f"userNode {{ {NODE} }} reply {{ {NODE} }} openToolUseIds error"
        " compaction { status } call { headId readIds }")
SUMMARY = "id seq coversIds retainedIds absorbedId compactedHeadId retired deleted strategy"
RESULTS = ("blocks { __typename ... on ToolResultBlock { toolUseId isError"
           " content { __typename ... on TextBlock { text } } } }")
FORMATS = ("ANTHROPIC_MESSAGES", "OPENAI_CHAT")
STATE = """query($s: ID!) { session(id: $s) {
  headId nodeCount summaryStrategy activeSummaryId branches { tip { id } isHead }
} }"""
CHUNK = 15      # renders per query (the API allows 20 aliases)
REQUESTS = 6    # heads per request query: three aliases each


def names_tool(text: str) -> bool:
    """The offline model's rule: it calls a tool the message names as a word."""
    return TOOL in re.findall(r"[A-Za-z0-9_-]+", text)


class AgentDag:
    def __init__(self, client: Client, ledger: Ledger, session_id: str, root: dict,
                 strategy: str) -> None:
        self.client = client
        self.ledger = ledger
        self.id = session_id
        self.model = SummaryModel(root["id"], strategy)
        self.labels: dict[str, str] = {}
        self.uses: dict[str, tuple[str, ...]] = {}   # assistant node -> its tool use ids
        self.answers: dict[str, tuple[str, ...]] = {}  # tool node -> the ids it answers
        self.texts: dict[str, str] = {}              # user node -> its text
        self.next_use = 0
        self.steps: list[str] = []                   # what was done, for failure messages
        self._learn(root)

    @classmethod
    async def start(cls, client: Client, ledger: Ledger, title: str,
                    strategy: str = "rolling") -> "AgentDag":
        data = await client(
            f"mutation($t: String, $st: String) {{ createSession(title: $t, systemPrompt:"
            f" \"You are an agent.\", summaryStrategy: $st) {{ id summaryStrategy"
            f" root {{ {NODE} }} }} }}", t=title, st=strategy)
        session = data["createSession"]
        assert session["summaryStrategy"] == strategy
        return cls(client, ledger, session["id"], session["root"], strategy)

    # ---- the models ----------------------------------------------------------------------
    @property
    def head(self) -> str:
        return self.model.head

    def role(self, node: str) -> str:
        return self.model.turns[node].role

    def open_at(self, head: str) -> list[str]:
        """The tool uses `head` leaves open: its own, when it is an assistant message."""
        return list(self.uses.get(head, ())) if self.role(head) == "assistant" else []

    def used(self) -> set[str]:
        return {u for ids in self.uses.values() for u in ids}

    def new_use_ids(self, count: int) -> list[str]:
        self.next_use += count
        return [f"toolu_{i:03d}" for i in range(self.next_use - count, self.next_use)]

    def live(self, role: str | None = None) -> list[str]:
        return [t.id for t in self.model.live_turns()
                if role is None or t.role == role]

    def show(self, ids: Any) -> str:
        if ids is None:
            return "None"
        if isinstance(ids, str):
            return self.labels.get(ids, ids)
        shown = [self.labels.get(i, i) for i in ids]
        if len(shown) > 12:  # a long run: its ends
            shown = shown[:4] + [f"… {len(shown) - 8} more …"] + shown[-4:]
        return "[" + ", ".join(shown) + "]"

    def _learn(self, node: dict) -> str:
        role = node["role"].lower()
        self.model.add_turn(Turn(node["id"], role, node["seq"], node["predecessorId"],
                                 node["callerId"], node["sideBranch"]))
        assert node["deleted"] is False, node
        assert node["depth"] == self.model.depth(node["id"]), node
        label = {"system": "R", "user": "u", "assistant": "a", "tool": "t"}[role]
        self.labels.setdefault(node["id"], f"{label}{node['seq']}")
        if role == "assistant":
            self.uses[node["id"]] = tuple(node["toolUseIds"])
        else:
            assert node["toolUseIds"] == [], node
        if role == "user":
            self.texts[node["id"]] = node["content"]
        return node["id"]

    async def _done(self, text: str) -> None:
        """A step is done: it is logged, and everything is checked."""
        self.steps.append(text)
        await self.check()

    def refusal(self, pred: str, role: str, answers: list[str],
                new_uses: list[str]) -> list[str] | None:
        """The ids a write after `pred` must be refused for, by the tool-pair rule (None: it
        is accepted): results answering nothing `pred` leaves open, else the open uses it
        leaves unanswered, else tool use ids already used in the session."""
        opened = self.open_at(pred)
        unmatched = [a for a in answers if a not in opened]
        if unmatched:
            return unmatched
        unanswered = [o for o in opened if o not in answers]
        if unanswered:
            return unanswered
        taken = [u for u in new_uses if u in self.used()]
        return taken or None

    async def counts(self) -> tuple[int, str]:
        data = await self.client("query($s: ID!) { session(id: $s) { nodeCount headId } }",
                                 s=self.id)
        return data["session"]["nodeCount"], data["session"]["headId"]

    async def refused(self, query: str, ids: list[str], what: str, **variables: Any) -> None:
        """The mutation is BAD_INPUT naming every one of `ids`, and writes nothing."""
        before = await self.counts()
        errors = await self.client.errors(query, **variables)
        assert [e["extensions"]["code"] for e in errors] == ["BAD_INPUT"], (what, errors)
        missing = [i for i in ids if i not in errors[0]["message"]]
        assert not missing, f"{what}: the refusal does not name {missing}: {errors[0]['message']}"
        assert await self.counts() == before, f"{what} was refused but changed the session"
        await self._done(f"{what}: refused, naming {ids}")

    # ---- appends (no model) ---------------------------------------------------------------
    APPEND = (f"mutation($s: ID!, $r: Role!, $b: [ContentBlockInput!], $p: ID) {{"
              f" appendMessage(sessionId: $s, role: $r, blocks: $b, predecessorId: $p)"
              f" {{ {NODE} }} }}")

    async def _append(self, role: str, blocks: list[dict], at: str | None, what: str,
                      answers: list[str] = (), new_uses: list[str] = ()) -> str | None:
        pred = at or self.head
        what = f"{what} after {self.show(pred)}"
        wrong = self.refusal(pred, role, list(answers), list(new_uses))
        variables = {"s": self.id, "r": role.upper(), "b": blocks, "p": at}
        if wrong is not None:
            await self.refused(self.APPEND, wrong, what, **variables)
            return None
        node = (await self.client(self.APPEND, **variables))["appendMessage"]
        assert node["predecessorId"] == pred, (what, node)
        if role == "assistant":
            assert node["toolUseIds"] == list(new_uses), (what, node)
        nid = self._learn(node)
        if role == "tool":
            self.answers[nid] = tuple(answers)
        if pred == self.head:
            self.model.head = nid
        await self._done(f"{what}: {self.show(nid)}")
        return nid

    async def user(self, text: str, at: str | None = None) -> str | None:
        return await self._append("user", [{"text": {"text": text}}], at, "append user")

    async def assistant(self, text: str | None = None, uses: int | list[str] = 0,
                        at: str | None = None) -> str | None:
        """An assistant message: `text`, then `uses` tool uses (a count of new ids, or ids)."""
        ids = self.new_use_ids(uses) if isinstance(uses, int) else list(uses)
        blocks = ([{"text": {"text": text}}] if text else []) + [
            {"toolUse": {"id": i, "name": TOOL, "input": {"word": f"w{i[-3:]}"}}} for i in ids]
        return await self._append("assistant", blocks, at,
                                  f"append assistant{' ' + str(ids) if ids else ''}",
                                  new_uses=ids)

    async def results(self, answers: list[str] | None = None, errors: set[str] = frozenset(),
                      at: str | None = None) -> str | None:
        """A tool message answering `answers` (default: what the predecessor leaves open)."""
        pred = at or self.head
        answers = self.open_at(pred) if answers is None else answers
        blocks = [{"toolResult": {"toolUseId": i, "content": f"result of {i}\nmore",
                                  "isError": i in errors}} for i in answers]
        return await self._append("tool", blocks, at, f"append results {answers}",
                                  answers=answers)

    # ---- turns (the offline model) ---------------------------------------------------------
    def _expect_reply(self, prompt: str, turn: dict, what: str) -> str:
        """The reply of the offline model to `prompt`'s render, by its documented rule:
        results answered, a tool called when the render ends in a user message naming an
        offered tool, a text reply otherwise. The call read exactly that render."""
        assert turn["error"] is None and turn["compaction"] is None, (what, turn)
        rendered = self.model.render(prompt)
        assert (turn["call"]["headId"], turn["call"]["readIds"]) == (prompt, rendered), (
            f"{what}: the call read {self.show(turn['call']['readIds'])} from"
            f" {self.show(turn['call']['headId'])}, expected {self.show(rendered)}")
        reply = turn["reply"]
        assert reply["predecessorId"] == prompt and reply["role"] == "ASSISTANT", (what, reply)
        last = rendered[-1]
        calls = (last == prompt and self.role(last) == "user" and names_tool(self.texts[last]))
        assert len(reply["toolUseIds"]) == (1 if calls else 0), (
            f"{what}: the offline model's reply {reply['toolUseIds']} to {self.show(rendered)}")
        assert turn["openToolUseIds"] == reply["toolUseIds"], (what, turn)
        if last in self.model.turns and self.role(last) == "tool":
            assert reply["content"].startswith("[offline model] The tools answered."), reply
        nid = self._learn(reply)
        self.model.head = nid
        return nid

    async def send(self, text: str, cancel: bool = False) -> str | None:
        """sendMessage with the tools offered (and cancelOpenToolUses); returns the reply."""
        query = (f"mutation($s: ID!, $c: String, $t: [ToolInput!], $x: Boolean!) {{"
                 f" sendMessage(sessionId: $s, content: $c, tools: $t, cancelOpenToolUses: $x)"
                 f" {{ {TURN} }} }}")
        what = (f"sendMessage {text[:24]!r}{' cancelling' if cancel else ''}"
                f" at {self.show(self.head)}")
        opened = self.open_at(self.head)
        variables = {"s": self.id, "c": text, "t": TOOLS, "x": cancel}
        if opened and not cancel:
            await self.refused(query, opened, what, **variables)
            return None
        turn = (await self.client(query, **variables))["sendMessage"]
        user = turn["userNode"]
        if opened:
            await self._learn_cancel(user["predecessorId"], opened, what)
        else:
            assert user["predecessorId"] == self.head, (what, user)
        self.model.head = self._learn(user)
        reply = self._expect_reply(user["id"], turn, what)
        await self._done(f"{what}: {self.show([user['id'], reply])}")
        return reply

    async def _learn_cancel(self, cancel_id: str, opened: list[str], what: str) -> None:
        data = await self.client(f"query($n: ID!) {{ node(id: $n) {{ ... on Message {{ {NODE}"
                                 f" {RESULTS} }} }} }}", n=cancel_id)
        node = data["node"]
        assert node["role"] == "TOOL" and node["predecessorId"] == self.head, (what, node)
        assert [(b["toolUseId"], b["isError"]) for b in node["blocks"]] == [
            (i, True) for i in opened], (f"{what}: the cancel message", node)
        self.answers[self._learn(node)] = tuple(opened)
        self.model.head = cancel_id

    async def submit(self, answers: list[str] | None = None,
                     errors: set[str] = frozenset()) -> str | None:
        """submitToolResults for `answers` (default: HEAD's open uses); returns the reply."""
        answers = self.open_at(self.head) if answers is None else answers
        query = (f"mutation($s: ID!, $r: [ToolResultBlockInput!]!, $t: [ToolInput!]) {{"
                 f" submitToolResults(sessionId: $s, results: $r, tools: $t) {{ {TURN} }} }}")
        results = [{"toolUseId": i, "content": f"submitted result of {i}", "isError": i in errors}
                   for i in answers]
        what = f"submitToolResults {answers} at {self.show(self.head)}"
        wrong = self.refusal(self.head, "tool", answers, [])
        variables = {"s": self.id, "r": results, "t": TOOLS}
        if wrong is not None:
            await self.refused(query, wrong, what, **variables)
            return None
        turn = (await self.client(query, **variables))["submitToolResults"]
        node = turn["userNode"]
        assert node["role"] == "TOOL" and node["predecessorId"] == self.head, (what, node)
        nid = self._learn(node)
        self.answers[nid] = tuple(answers)
        self.model.head = nid
        reply = self._expect_reply(nid, turn, what)
        await self._done(f"{what}: {self.show([nid, reply])}")
        return reply

    async def retry(self, node: str) -> str:
        prompt = self.model.turns[node].predecessor
        data = await self.client(f"mutation($n: ID!, $t: [ToolInput!]) {{ retry(nodeId: $n,"
                                 f" tools: $t) {{ {TURN} }} }}", n=node, t=TOOLS)
        turn = data["retry"]
        assert turn["userNode"] is None or turn["userNode"]["id"] == prompt, turn
        what = f"retry {self.show(node)}"
        reply = self._expect_reply(prompt, turn, what)
        await self._done(f"{what}: {self.show(reply)}")
        return reply

    async def edit(self, node: str, text: str) -> str:
        data = await self.client(f"mutation($n: ID!, $c: String, $t: [ToolInput!]) {{"
                                 f" editMessage(nodeId: $n, content: $c, tools: $t)"
                                 f" {{ {TURN} }} }}", n=node, c=text, t=TOOLS)
        turn = data["editMessage"]
        user = turn["userNode"]
        what = f"edit {self.show(node)} to {text[:24]!r}"
        assert user["predecessorId"] == self.model.turns[node].predecessor, (what, user)
        self.model.head = self._learn(user)
        reply = self._expect_reply(user["id"], turn, what)
        await self._done(f"{what}: {self.show([user['id'], reply])}")
        return reply

    # ---- moves ---------------------------------------------------------------------------
    async def checkout(self, node: str) -> None:
        data = await self.client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s,"
                                 " nodeId: $n) { headId } }", s=self.id, n=node)
        assert data["checkout"]["headId"] == node
        self.model.head = node
        await self._done(f"checkout {self.show(node)}")

    async def rewind(self, node: str) -> None:
        data = await self.client("mutation($s: ID!, $n: ID!) { rewind(sessionId: $s,"
                                 " nodeId: $n) { headId } }", s=self.id, n=node)
        assert data["rewind"]["headId"] == node
        self.model.head = node
        await self._done(f"rewind to {self.show(node)}")

    async def delete(self, tip: str) -> set[str]:
        data = await self.client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s,"
                                 " tipId: $t) { headId } }", s=self.id, t=tip)
        _, gone = self.model.delete_branch(tip)
        assert data["deleteBranch"]["headId"] == self.head, "HEAD after deleteBranch"
        await self._done(f"deleteBranch {self.show(tip)}: {self.show(sorted(gone))} gone")
        return gone

    async def compact(self, keep: int, head: str | None = None) -> str | None:
        """compact(keepRecentTokens, headId); the summary's id, None when SKIPPED."""
        m = self.model
        at = head or self.head
        before, absorbed = m.render(at), m.applicable(at)
        newest = max([t.seq for t in m.turns.values()] + [s.seq for s in m.summaries.values()])
        data = await self.client(
            f"mutation($s: ID!, $k: Int, $h: ID) {{ compact(sessionId: $s, keepRecentTokens: $k,"
            f" headId: $h) {{ status message summary {{ {SUMMARY} }} }} }}",
            s=self.id, k=keep, h=at)
        result = data["compact"]
        what = f"compact keep={keep} at {self.show(at)} (render {self.show(before)})"
        if result["status"] == "SKIPPED":
            await self._done(f"{what}: skipped")
            return None
        assert result["status"] == "COMPACTED", (what, result)
        s = result["summary"]
        sid = s["id"]
        self.labels[sid] = f"S{s['seq']}"
        covers, chain = s["coversIds"], m.chain(at)
        assert (s["compactedHeadId"], s["absorbedId"], s["strategy"]) == (at, absorbed,
                                                                         m.strategy), (what, s)
        assert s["seq"] > newest and not s["retired"] and not s["deleted"], (what, s)
        assert covers and covers[0] in chain, (what, s)
        first = chain.index(covers[0])
        assert chain[first:first + len(covers)] == covers, (
            f"{what}: coversIds {self.show(covers)} is not a segment of {self.show(chain)}")
        old = list(m.summaries[absorbed].covers) if absorbed else []
        tail = before[before.index(absorbed) + 1:] if absorbed else before[1:]
        assert covers[:len(old)] == old and covers[len(old):] == tail[:len(covers) - len(old)], (
            f"{what}: {self.show(covers)} is not {self.show(old)} extended by a prefix of the"
            f" rendered tail {self.show(tail)}")
        retained = chain[chain.index(covers[-1]) + 1:]
        assert s["retainedIds"] == retained, (what, self.show(s["retainedIds"]))
        m.compacted(Summary(sid, s["seq"], chain[first - 1], tuple(covers), tuple(retained),
                            absorbed, None, at, m.strategy))
        what = f"{what}: {self.show(sid)} covers {self.show(covers)}"
        self.steps.append(what)
        split = self.open_at(covers[-1])
        assert not split, (
            f"{what}, ending on {self.show(covers[-1])}, whose tool uses {split} are answered"
            f" outside the summary: the cut splits a tool pair")
        await self.check()
        return sid

    def uncompactable(self) -> list[str]:
        return [s.id for s in self.model.summaries.values() if self.model.candidate(s.id)]

    async def uncompact(self, sid: str) -> None:
        m = self.model
        data = await self.client(
            "mutation($x: ID!) { uncompact(summaryId: $x) { summary { id retired }"
            " session { headId activeSummaryId } } }", x=sid)
        m.uncompact(sid)
        u = data["uncompact"]
        assert u["summary"] == {"id": sid, "retired": True}, u
        assert u["session"] == {"headId": self.head, "activeSummaryId": m.active()}, (
            f"uncompact {self.show(sid)}: {u['session']}, expected active {self.show(m.active())}")
        await self._done(f"uncompact {self.show(sid)}")

    async def set_strategy(self, strategy: str) -> None:
        data = await self.client("mutation($s: ID!, $st: String) { updateSession(sessionId: $s,"
                                 " summaryStrategy: $st) { summaryStrategy headId } }",
                                 s=self.id, st=strategy)
        assert data["updateSession"] == {"summaryStrategy": strategy, "headId": self.head}
        self.model.strategy = strategy
        await self._done(f"strategy {strategy}")

    # ---- after every step ------------------------------------------------------------------
    def heads(self) -> list[str]:
        tips = self.model.tips()
        return tips + ([self.head] if self.head not in tips else [])

    async def renders(self, heads: list[str]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for i in range(0, len(heads), CHUNK):
            part = heads[i:i + CHUNK]
            args = "".join(f", $h{j}: ID!" for j in range(len(part)))
            body = " ".join(f"r{j}: render(headId: $h{j}) {{ nodeIds summaryId openToolUseIds }}"
                            for j in range(len(part)))
            data = await self.client(f"query($s: ID!{args}) {{ session(id: $s) {{ {body} }} }}",
                                     s=self.id, **{f"h{j}": h for j, h in enumerate(part)})
            out |= {h: data["session"][f"r{j}"] for j, h in enumerate(part)}
        return out

    async def requests(self, heads: list[str]) -> dict[str, tuple[dict, dict]]:
        out: dict[str, tuple[dict, dict]] = {}
        for i in range(0, len(heads), REQUESTS):
            part = heads[i:i + REQUESTS]
            args = "".join(f", $h{j}: ID!" for j in range(len(part)))
            body = " ".join(f"r{j}: render(headId: $h{j}) {{ a: request(format: ANTHROPIC_MESSAGES,"
                            f" tools: $t) o: request(format: OPENAI_CHAT) }}"
                            for j in range(len(part)))
            data = await self.client(
                f"query($s: ID!, $t: [ToolInput!]{args}) {{ session(id: $s) {{ {body} }} }}",
                s=self.id, t=TOOLS, **{f"h{j}": h for j, h in enumerate(part)})
            out |= {h: (data["session"][f"r{j}"]["a"], data["session"][f"r{j}"]["o"])
                    for j, h in enumerate(part)}
        return out

    def broken_pairs(self, rendered: list[str]) -> list[str]:
        """Each message of a render answers exactly the tool uses the one before it opens."""
        broken = []
        for before, node in zip(rendered, rendered[1:]):
            opened = self.open_at(before) if before in self.model.turns else []
            answered = list(self.answers.get(node, ()))
            if sorted(answered) != sorted(opened):
                broken.append(f"{self.show(node)} answering {answered} after {self.show(before)}"
                              f" opening {opened}")
        return broken

    def where(self, head: str) -> str:
        tag = " (HEAD)" if head == self.head else ""
        return f"{self.show(head)}{tag}, rendering {self.show(self.model.render(head))}"

    async def check(self) -> None:
        m = self.model
        show = self.show
        session = (await self.client(STATE, s=self.id))["session"]
        assert session["headId"] == m.head, (
            f"HEAD {show(session['headId'])}, expected {show(m.head)}")
        assert session["summaryStrategy"] == m.strategy
        assert session["nodeCount"] == len(m.turns) + len(m.summaries), "nodeCount"
        assert session["activeSummaryId"] == m.active(), "activeSummaryId"
        tips = m.tips()
        branches = {b["tip"]["id"]: b["isHead"] for b in session["branches"]}
        assert branches == {t: t == m.head for t in tips}, (
            f"branches {show(sorted(branches))}, expected {show(tips)}")

        heads = self.heads()
        renders = await self.renders(heads)
        for head, got in renders.items():
            broken = self.broken_pairs(got["nodeIds"])
            assert not broken, f"the render of {self.where(head)} holds {'; '.join(broken)}"
            expected = (m.render(head), m.applicable(head), self.open_at(head))
            assert (got["nodeIds"], got["summaryId"], got["openToolUseIds"]) == expected, (
                f"render of {self.where(head)}: got {show(got['nodeIds'])} (summary"
                f" {show(got['summaryId'])}, open {got['openToolUseIds']}), expected open"
                f" {expected[2]} (summary {show(expected[1])})")

        opened = [h for h in heads if self.open_at(h)]
        valid = [h for h in heads if h not in opened]
        # Drop the open tip, and the rest of its render must be a request.
        valid += [p for p in (m.turns[h].predecessor for h in opened)
                  if p != m.root and p not in valid]
        for head in opened:
            await self._refused_request(head)
        # ROOT alone holds no message, which the Messages API does not take: that request is
        # refused saying so; the OpenAI one is the system message alone.
        alone = [h for h in valid if m.render(h) == [m.root]]
        for head in alone:
            await self._refused_request(head, ("ANTHROPIC_MESSAGES",),
                                        "needs at least one message")
        bodies = await self.requests([h for h in valid if h not in alone])
        for head in alone:
            openai = await self.client("query($s: ID!, $h: ID!) { session(id: $s) { render("
                                       "headId: $h) { request(format: OPENAI_CHAT) } } }",
                                       s=self.id, h=head)
            bodies[head] = (None, openai["session"]["render"]["request"])
        for head, (anthropic, openai) in bodies.items():
            checks = [("Anthropic", anthropic, assert_valid_anthropic),
                      ("OpenAI", openai, assert_valid_openai)]
            for fmt, body, valid_for in [c for c in checks if c[1] is not None]:
                try:
                    valid_for(body)
                except AssertionError as e:
                    raise AssertionError(f"the {fmt} request of {self.where(head)} is not"
                                         f" valid: {e}") from None

        found = await self.ledger.violations(self.id)
        assert found == [], found

    async def _refused_request(self, head: str, formats: tuple[str, ...] = FORMATS,
                               saying: str | None = None) -> None:
        """`request` of `head` is BAD_INPUT in `formats`, naming the tool uses it leaves
        open (or `saying` what else it lacks)."""
        opened = self.open_at(head)
        for fmt in formats:
            try:
                await self.client(f"query($s: ID!, $h: ID!) {{ session(id: $s) {{ render(headId:"
                                  f" $h) {{ request(format: {fmt}) }} }} }}", s=self.id, h=head)
            except GraphQLErrors as refused:
                error = refused.errors[0]
                assert refused.codes == ["BAD_INPUT"], refused.errors
                assert all(i in error["message"] for i in opened), (head, opened, error)
                assert saying is None or saying in error["message"], (head, error)
                continue
            lacks = f"leaves {opened} open" if opened else saying
            raise AssertionError(f"the {fmt} request of {self.where(head)} was given, though it"
                                 f" {lacks}")
