"""Scenario steps over the public GraphQL API, and an independent model of what to expect.

A scenario is a plain function: a few `Conversation` steps, each followed by
`await c.expect(head=...)`, which checks HEAD, the branch list and the rendered id
list of every branch against the model. The model is deliberately simple Python —
a parent map and the §3 rule written out — so it does not share code with the service.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tests.api_client import Client


@dataclass
class Model:
    root: str
    parent: dict[str, str] = field(default_factory=dict)  # live user-branch nodes only
    summary: str | None = None
    covers: tuple[str, ...] = ()

    def add(self, node: str, parent: str) -> None:
        self.parent[node] = parent

    def chain(self, node: str) -> list[str]:
        out = [node]
        while out[-1] != self.root:
            out.append(self.parent[out[-1]])
        return out[::-1]

    def children(self, node: str) -> list[str]:
        return [n for n, p in self.parent.items() if p == node]

    def tips(self) -> set[str]:
        nodes = set(self.parent) | {self.root}
        return {n for n in nodes if not self.children(n)}

    def render(self, head: str) -> list[str]:
        """Spec §3, written out: the whole covered segment on the chain → [.., S, tail]."""
        chain = self.chain(head)
        if self.summary and self.covers and set(self.covers) <= set(chain):
            first = chain.index(self.covers[0])
            last = chain.index(self.covers[-1])
            return chain[:first] + [self.summary] + chain[last + 1:]
        return chain

    def delete(self, tip: str) -> str:
        """Removes the branch's exclusive part; returns its fork point."""
        top = tip
        while self.parent[top] != self.root and len(self.children(self.parent[top])) == 1:
            top = self.parent[top]
        doomed = {top}
        while True:
            more = {n for n, p in self.parent.items() if p in doomed} - doomed
            if not more:
                break
            doomed |= more
        fork = self.parent[top]
        for node in doomed:
            del self.parent[node]
        return fork


class Conversation:
    def __init__(self, client: Client, session_id: str, root_id: str) -> None:
        self.client = client
        self.id = session_id
        self.model = Model(root_id)
        self.head = root_id

    @classmethod
    async def start(cls, client: Client, title: str) -> "Conversation":
        data = await client("mutation($t: String) { createSession(title: $t, systemPrompt: "
                            "\"You are a scenario.\") { id rootId } }", t=title)
        return cls(client, data["createSession"]["id"], data["createSession"]["rootId"])

    async def say(self, text: str) -> tuple[str, str]:
        data = await self.client(
            "mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) {"
            " userNode { id predecessorId } reply { id } error } }", s=self.id, c=text)
        turn = data["sendMessage"]
        assert turn["error"] is None, turn
        user, reply = turn["userNode"]["id"], turn["reply"]["id"]
        self.model.add(user, turn["userNode"]["predecessorId"])
        self.model.add(reply, user)
        self.head = reply
        return user, reply

    async def chat(self, count: int, start: int = 0) -> list[str]:
        ids = []
        for i in range(start, start + count):
            ids += await self.say(f"Question {i:03d}. ".ljust(100, "x"))
        return ids

    async def edit(self, node: str, text: str) -> tuple[str, str]:
        data = await self.client(
            "mutation($n: ID!, $c: String!) { editMessage(nodeId: $n, content: $c) {"
            " userNode { id predecessorId } reply { id } } }", n=node, c=text)
        turn = data["editMessage"]
        user, reply = turn["userNode"]["id"], turn["reply"]["id"]
        self.model.add(user, turn["userNode"]["predecessorId"])
        self.model.add(reply, user)
        self.head = reply
        return user, reply

    async def retry(self, reply: str) -> str:
        data = await self.client("mutation($n: ID!) { retry(nodeId: $n) { reply { id"
                                 " predecessorId } } }", n=reply)
        new = data["retry"]["reply"]
        self.model.add(new["id"], new["predecessorId"])
        self.head = new["id"]
        return new["id"]

    async def checkout(self, node: str) -> None:
        await self.client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n)"
                          " { id } }", s=self.id, n=node)
        self.head = node

    async def rewind(self, node: str) -> None:
        await self.client("mutation($s: ID!, $n: ID!) { rewind(sessionId: $s, nodeId: $n)"
                          " { id } }", s=self.id, n=node)
        self.head = node

    async def delete(self, tip: str) -> None:
        await self.client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s, tipId: $t)"
                          " { id } }", s=self.id, t=tip)
        fork = self.model.delete(tip)
        if self.head != self.model.root and self.head not in self.model.parent:
            self.head = fork  # HEAD was among the deleted nodes

    async def compact(self, keep: int, head: str | None = None) -> str:
        data = await self.client(
            "mutation($s: ID!, $k: Int, $h: ID) { compact(sessionId: $s, keepRecentTokens: $k,"
            " headId: $h) { status message summary { id coversIds } } }",
            s=self.id, k=keep, h=head)
        result = data["compact"]
        assert result["status"] == "COMPACTED", result
        self.model.summary = result["summary"]["id"]
        self.model.covers = tuple(result["summary"]["coversIds"])
        return self.model.summary

    async def spawn(self, from_node: str, prompt: str) -> tuple[str, str]:
        data = await self.client(
            "mutation($s: ID!, $f: ID!, $p: String!) { spawnTask(sessionId: $s, fromNodeId: $f,"
            " prompt: $p) { userNode { id } reply { id } } }", s=self.id, f=from_node, p=prompt)
        task = data["spawnTask"]
        return task["userNode"]["id"], task["reply"]["id"]

    async def rendered(self, head: str) -> list[str]:
        """What the service renders from `head`."""
        data = await self.client("query($s: ID!, $h: ID!) { session(id: $s) {"
                                 " render(headId: $h) { nodeIds } } }", s=self.id, h=head)
        return data["session"]["render"]["nodeIds"]

    async def expect(self, head: str | None = None) -> dict:
        """Checks HEAD, the branch list and every branch's rendering against the model."""
        if head is not None:
            assert self.head == head, "the scenario's own bookkeeping disagrees"
        tips = sorted(self.model.tips())
        renders = " ".join(f"r{i}: render(headId: \"{t}\") {{ nodeIds }}"
                           for i, t in enumerate(tips))
        data = await self.client(f"query($s: ID!) {{ session(id: $s) {{ headId"
                                 f" branches {{ tip {{ id }} isHead }} render {{ nodeIds }}"
                                 f" {renders} }} }}", s=self.id)
        session = data["session"]
        assert session["headId"] == self.head, "HEAD"
        assert {b["tip"]["id"] for b in session["branches"]} == set(tips), "branches"
        assert [b["tip"]["id"] for b in session["branches"] if b["isHead"]] == (
            [self.head] if self.head in tips else []), "isHead"
        for i, tip in enumerate(tips):
            assert session[f"r{i}"]["nodeIds"] == self.model.render(tip), f"branch {tip}"
        assert session["render"]["nodeIds"] == self.model.render(self.head), "render at HEAD"
        return session
