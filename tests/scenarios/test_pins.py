"""Pins end to end under both summary strategies, over the public API on a real service and
a real Neo4j, against the independent model (tests/scenarios/summary_model.py, extended by
pins): after every step every tip's render (and HEAD's), the graph rows' capsules and pinned
flags, and every tip's Anthropic and OpenAI requests are checked; every compaction against
the model's cut, which charges the pins first."""
from __future__ import annotations

import asyncio

import pytest

from tests.api_client import Client
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai
from tests.scenarios.test_summary_strategies import NODE, Dag, question, small_window  # noqa: F401

EVENTS = ("subscription($s: ID!) { sessionEvents(sessionId: $s) { type"
          " ... on NodePinned { nodeId } ... on NodeUnpinned { nodeId } } }")
REQUESTS = ("query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) {"
            " a: request(format: ANTHROPIC_MESSAGES) o: request(format: OPENAI_CHAT) } } }")
APPEND = (f"mutation($s: ID!, $r: Role!, $c: String, $b: [ContentBlockInput!]) {{"
          f" appendMessage(sessionId: $s, role: $r, content: $c, blocks: $b) {{ {NODE} }} }}")


class PinDag(Dag):
    async def pin(self, node: str) -> None:
        await self._pinning("pin", node, True)

    async def unpin(self, node: str) -> None:
        await self._pinning("unpin", node, False)

    async def _pinning(self, mutation: str, node: str, pinned: bool) -> None:
        changes = (node in self.model.pins) != pinned
        action = lambda: self.client(  # noqa: E731
            f"mutation($n: ID!) {{ {mutation}(nodeId: $n) {{ id pinned }} }}", n=node)
        if changes:
            ready = asyncio.Event()
            listener = asyncio.create_task(self.client.subscribe(EVENTS, {"s": self.id}, 1,
                                                                 ready))
            await ready.wait()
            data = await action()
            events = [p["data"]["sessionEvents"] for p in await listener]
            assert events == [{"type": f"NODE_{'UN' if not pinned else ''}PINNED",
                               "nodeId": node}], events
        else:
            data = await action()
        assert data[mutation] == {"id": node, "pinned": pinned}
        (self.model.pins.add if pinned else self.model.pins.discard)(node)

    async def tool_round(self, tag: str) -> list[str]:
        """user → assistant(tool use) → tool(result) → assistant, appended at HEAD."""
        out = []
        for role, content, blocks in (
                ("USER", f"Look up {tag}. ".ljust(100, "x"), None),
                ("ASSISTANT", None, [{"toolUse": {"id": f"toolu_{tag}", "name": "lookup",
                                                  "input": {"what": tag}}}]),
                ("TOOL", None, [{"toolResult": {"toolUseId": f"toolu_{tag}",
                                                "content": f"{tag} is settled."}}]),
                ("ASSISTANT", f"Looked up {tag}.", None)):
            node = (await self.client(APPEND, s=self.id, r=role, c=content,
                                      b=blocks))["appendMessage"]
            assert node["predecessorId"] == self.model.head
            self.model.head = self._learn(node)
            out.append(node["id"])
        return out

    async def check(self, head: str | None = None) -> dict:
        state = await super().check(head)
        m = self.model
        rows = {r["id"]: r for r in (await self.client(
            "query($s: ID!) { session(id: $s) { graph { nodes { id pinned } } } }",
            s=self.id))["session"]["graph"]["nodes"]}
        assert {i for i, r in rows.items() if r["pinned"]} == {
            p for p in m.pins if not m.turns[p].deleted}, "graph rows' pinned flags"
        for tip in m.tips():
            render = (await self.client(REQUESTS, s=self.id, h=tip))["session"]["render"]
            assert_valid_anthropic(render["a"])
            assert_valid_openai(render["o"])
        return state


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_pins_across_three_recompactions_an_unpin_a_fork_and_a_tool_pair(
        client, checked, strategy):
    d = await PinDag.start(client, f"pins {strategy}", strategy)
    checked.append(d.id)
    m = d.model
    main = await d.chat(3)
    main += await d.tool_round("alpha")
    main += await d.chat(2, start=3)
    rule, result = main[0], main[8]  # the first question; the tool message of the round
    await d.pin(rule)
    await d.pin(result)
    await d.pin(rule)  # again: nothing written
    await d.check(head=main[-1])

    s1 = await d.compact()
    state = await d.check(head=main[-1])
    kept = [n for n in m.summaries[s1].covers if n in (rule, main[7], result)]
    assert state["session"]["render"]["nodeIds"][1:2 + len(kept)] == [s1, *kept]
    assert main[7] in kept, "the tool use comes along with its pinned result"

    main += await d.chat(3, start=10)
    await d.check(head=main[-1])
    s2 = await d.compact()
    await d.check(head=main[-1])
    # A pin on a turn already covered takes effect at once; the next turn reads it.
    covered = next(n for n in m.summaries[s2].covers
                   if m.turns[n].role == "assistant" and n not in m.pins and n != main[7])
    await d.pin(covered)
    await d.check(head=main[-1])
    main += await d.say(question(20))
    await d.check(head=main[-1])

    main += await d.chat(3, start=21)
    s3 = await d.compact()
    await d.check(head=main[-1])
    assert m.summaries[s3].absorbed == s2 and m.summaries[s2].absorbed == s1
    assert rule in m.render(main[-1])

    # Unpin: the turn leaves the render (the summary still covers it); unpin again is a no-op.
    await d.unpin(rule)
    await d.unpin(rule)
    await d.check(head=main[-1])
    assert rule not in m.render(main[-1])
    main += await d.say(question(30))
    await d.check(head=main[-1])

    # A fork: an edit of the last user message inherits the summary and its pins; a pin on
    # the fork, then compacting the fork, keeps that pin after the fork's new summary.
    fork = list(await d.edit(main[-2], "Question 031, edited. ".ljust(100, "x")))
    state = await d.check(head=fork[-1])
    assert state["session"]["render"]["summaryId"] == s3
    await d.pin(fork[0])
    fork += await d.chat(4, start=40)
    await d.check(head=fork[-1])
    s4 = await d.compact(keep=300)
    await d.check(head=fork[-1])
    assert fork[0] in m.summaries[s4].covers and fork[0] in m.render(fork[-1])
    # The main branch renders as the model says (verbatim under rolling, S3 under branch).
    await d.checkout(main[-1])
    await d.check(head=main[-1])


async def test_automatic_compaction_keeps_room_for_pins(small_window, checked):  # noqa: F811
    """Turns that compact by themselves (80 % of a 500-token window, keeping 130) charge the
    pins first, keep rendering them, and never let the prompt outgrow the window."""
    client = Client(small_window.url)
    for strategy in ("rolling", "branch"):
        d = await PinDag.start(client, f"auto pins {strategy}", strategy)
        checked.append(d.id)
        m = d.model
        main = await d.chat(2)
        await d.pin(main[0])
        main += await d.chat(10, start=2)
        await d.check(head=main[-1])
        assert len(d.auto) >= 2, "main should have compacted by itself at least twice"
        assert main[0] in m.render(main[-1])
        tokens = (await d.client("query($s: ID!) { session(id: $s) { render { tokens } } }",
                                 s=d.id))["session"]["render"]["tokens"]
        assert tokens < 500
