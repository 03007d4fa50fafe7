"""Branch summaries end to end (docs/concepts/annotations.md): carryOver and
checkout(summarizeLeft) under both summary strategies, over the public API, against the
independent model (tests/scenarios/summary_model.py) extended by carry nodes.

After every step `CarryDag.check` runs the strategies' whole check (HEAD, branches, graph
rows, every tip's render, every summary) and then, for carry nodes: each one's carriedIds
are the model's (its source's chain below the common ancestor), each carried turn names its
carry nodes (carriedBy), and every tip's Anthropic and OpenAI request is valid, a carry node
in it framed as another branch's summary, never as a compaction summary.
"""
from __future__ import annotations

import pytest

from service.turns.requests import CARRY_OPEN, SUMMARY_OPEN
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai
from tests.scenarios.summary_model import Turn
from tests.scenarios.test_summary_strategies import CHUNK, NODE, Dag, question

CARRY = (f"mutation($s: ID!, $f: ID!, $i: ID!) {{ carryOver(sessionId: $s, fromTip: $f,"
         f" intoHead: $i) {{ headMoved carriedIds node {{ {NODE} carriedIds }}"
         f" session {{ headId }} }} }}")
CHECKOUT_LEFT = (f"mutation($s: ID!, $n: ID!) {{ checkout(sessionId: $s, nodeId: $n,"
                 f" summarizeLeft: true) {{ headId head {{ {NODE} carriedIds }} }} }}")
APPEND = (f"mutation($s: ID!, $r: Role!, $b: [ContentBlockInput!]) {{ appendMessage("
          f"sessionId: $s, role: $r, blocks: $b) {{ {NODE} }} }}")


class CarryDag(Dag):
    async def carry(self, from_tip: str, into: str) -> str:
        m = self.model
        expected = m.carry_segment(from_tip, into)
        result = (await self.client(CARRY, s=self.id, f=from_tip, i=into))["carryOver"]
        node = result["node"]
        assert result["carriedIds"] == node["carriedIds"] == expected, (
            f"carry {self.show(from_tip)} -> {self.show(into)}: carried"
            f" {self.show(result['carriedIds'])}, expected {self.show(expected)}")
        carried = self._carried(node, into, expected)
        moved = into == m.head
        assert result["headMoved"] is moved, "HEAD moves onto it only when the target is HEAD"
        if moved:
            m.head = carried
        assert result["session"]["headId"] == m.head
        return carried

    async def checkout_left(self, node: str) -> str:
        m = self.model
        expected = m.carry_segment(m.head, node)
        data = (await self.client(CHECKOUT_LEFT, s=self.id, n=node))["checkout"]
        carried = self._carried(data["head"], node, expected)
        assert data["head"]["carriedIds"] == expected
        assert data["headId"] == carried, "checkout(summarizeLeft) ends on the carry node"
        m.head = carried
        return carried

    def _carried(self, node: dict, into: str, expected: list[str]) -> str:
        assert node["role"] == "CARRY" and node["predecessorId"] == into, node
        carried = self._learn(node)
        self.labels[carried] = f"c{node['seq']}"
        self.model.carried[carried] = tuple(expected)
        return carried

    async def append(self, role: str, blocks: list[dict]) -> str:
        node = (await self.client(APPEND, s=self.id, r=role, b=blocks))["appendMessage"]
        assert node["predecessorId"] == self.model.head
        self.model.head = self._learn(node)
        return self.model.head

    async def check(self, head: str | None = None) -> dict:
        state = await super().check(head)
        m = self.model
        carriers = await self._provenance(list(m.carried))
        for cid, expected in m.carried.items():
            assert carriers[cid]["carriedIds"] == list(expected), self.show(cid)
        turns = sorted({t for ids in m.carried.values() for t in ids})
        by = await self._provenance(turns)
        for turn in turns:
            expected = sorted((c for c, ids in m.carried.items() if turn in ids),
                              key=m.seq_of, reverse=True)
            assert [c["id"] for c in by[turn]["carriedBy"]] == expected, self.show(turn)
        await self._requests_valid(m.tips())
        return state

    async def _provenance(self, ids: list[str]) -> dict[str, dict]:
        out: dict[str, dict] = {}
        for i in range(0, len(ids), CHUNK):
            part = ids[i:i + CHUNK]
            args = ", ".join(f"$n{j}: ID!" for j in range(len(part)))
            body = " ".join(f"n{j}: node(id: $n{j}) {{ ... on Message {{ carriedIds"
                            f" carriedBy {{ id }} }} }}" for j in range(len(part)))
            data = await self.client(f"query({args}) {{ {body} }}",
                                     **{f"n{j}": n for j, n in enumerate(part)})
            out |= {n: data[f"n{j}"] for j, n in enumerate(part)}
        return out

    async def _requests_valid(self, tips: list[str]) -> None:
        """Every tip without open tool uses: both requests valid, carry nodes framed as such."""
        m = self.model
        for tip in tips:
            render = (await self.client(
                "query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) {"
                " nodeIds openToolUseIds } } }", s=self.id, h=tip))["session"]["render"]
            if render["openToolUseIds"]:
                continue
            data = (await self.client(
                "query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) {"
                " a: request(format: ANTHROPIC_MESSAGES) o: request(format: OPENAI_CHAT) } } }",
                s=self.id, h=tip))["session"]["render"]
            assert_valid_anthropic(data["a"])
            assert_valid_openai(data["o"])
            carries = [n for n in render["nodeIds"] if n in m.carried]
            texts = [p if isinstance(p, str) else p.get("content") for p in
                     (msg["content"] for msg in data["o"]["messages"] if msg["role"] == "user")]
            framed = sum(str(t).count(CARRY_OPEN) for t in texts)
            assert framed == len(carries), (self.show(tip), framed, self.show(carries))
            summaries = [n for n in render["nodeIds"] if n in m.summaries]
            assert sum(str(t).count(SUMMARY_OPEN) for t in texts) == len(summaries)


def use(tool_id: str) -> list[dict]:
    return [{"text": {"text": "Looking it up."}},
            {"toolUse": {"id": tool_id, "name": "lookup", "input": {"q": tool_id}}}]


def result(tool_id: str) -> list[dict]:
    return [{"toolResult": {"toolUseId": tool_id, "content": f"found {tool_id}"}}]


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_a_carry_over_into_a_branch_that_is_then_compacted_three_times(
        client, checked, strategy):
    d = await CarryDag.start(client, f"carried {strategy}", strategy)
    checked.append(d.id)
    m = d.model
    main = await d.chat(4)
    await d.check(head=main[-1])
    await d.checkout(main[1])
    fork = await d.chat(2, start=10)
    await d.check(head=fork[-1])
    source = (await d.renders([main[-1]]))[main[-1]]

    carried = await d.carry(main[-1], fork[-1])  # into HEAD: HEAD moves onto it
    await d.check(head=carried)
    assert (await d.renders([main[-1]]))[main[-1]] == source, "the source renders as before"
    assert m.render(carried)[-1] == carried

    summaries = []
    for round_, count in enumerate((3, 3, 2)):
        grown = await d.chat(count, start=20 + 10 * round_)
        await d.check(head=grown[-1])
        summaries.append(await d.compact())
        assert summaries[-1] is not None
        await d.check(head=grown[-1])
    # The carry node is covered like any turn: the last summary's segment holds it and the
    # head renders the summary in its place.
    last = m.summaries[summaries[-1]]
    assert carried in last.covers and carried not in m.render(m.head)
    assert (await d.renders([main[-1]]))[main[-1]] == source


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_checkout_with_summarize_left_and_a_carry_over_elsewhere(client, checked, strategy):
    d = await CarryDag.start(client, f"checkout left {strategy}", strategy)
    checked.append(d.id)
    m = d.model
    main = await d.chat(3)
    summary = await d.compact(head=main[-1])
    await d.check(head=main[-1])

    # Leave the compacted branch for a turn inside it: the summary of what was left lands there.
    carried = await d.checkout_left(main[1])
    await d.check(head=carried)
    assert m.carried[carried] == tuple(main[2:])
    fork = await d.chat(2, start=10)
    await d.check(head=fork[-1])

    # A carry-over into a tip that is not HEAD leaves HEAD alone.
    back = await d.carry(fork[-1], main[-1])
    await d.check(head=fork[-1])
    assert m.render(back)[-1] == back and m.applicable(main[-1]) == summary
    await d.checkout(back)
    more = await d.chat(3, start=30)
    await d.check(head=more[-1])
    assert await d.compact() is not None
    await d.check(head=more[-1])

    # Deleting the branch carried from takes its turns (and the carry node written on it);
    # the carry node that summarized them stays, its provenance naming them, deleted.
    gone = await d.delete(fork[-1])
    assert carried in gone and set(m.carried[back]) <= gone and back not in gone
    await d.check(head=more[-1])


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_a_branch_ending_in_tool_pairs_or_an_open_tool_use_is_carried_as_text(
        client, checked, strategy):
    d = await CarryDag.start(client, f"tools {strategy}", strategy)
    checked.append(d.id)
    m = d.model
    main = await d.chat(2)
    await d.append("USER", [{"text": {"text": "Look both up."}}])
    await d.append("ASSISTANT", use(f"toolu_{strategy}_a"))
    await d.append("TOOL", result(f"toolu_{strategy}_a"))
    paired = await d.append("ASSISTANT", use(f"toolu_{strategy}_b"))  # left open
    await d.check(head=paired)

    await d.checkout(main[-1])
    fork = await d.chat(2, start=10)
    carried = await d.carry(paired, fork[-1])
    await d.check(head=carried)
    content = (await d.render_at())["nodes"][-1]["content"]
    assert "called lookup" in content and f"toolu_{strategy}_a" in content

    # Into the open tool use's own branch is refused: nothing may follow it but its answer.
    errors = await d.client.errors(CARRY, s=d.id, f=carried, i=paired)
    assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors
    assert f"toolu_{strategy}_b" in errors[0]["message"]
    await d.check(head=carried)

    # Answered, that branch takes the summary of the other one; then both compact.
    await d.checkout(paired)
    answer = await d.append("TOOL", result(f"toolu_{strategy}_b"))
    back = await d.carry(carried, answer)
    await d.check(head=back)
    assert m.carried[back] == tuple(fork + [carried])
    grown = await d.chat(2, start=20)
    assert await d.compact() is not None
    await d.check(head=grown[-1])
    await d.checkout(carried)
    await d.compact(head=carried)
    await d.check(head=carried)
