"""Where a call's prompt cache broke and which write broke it (docs/concepts/provenance.md),
over GraphQL on the real app: `ModelCall.cacheBreak` for each write that changes a prompt
before its end — a compaction, a pin and an unpin of a covered turn (a pair half too, and
after its own segment under `segmented`), an edit, an uncompaction, a checkout. The model
is the Anthropic stub through the real SDK, so the summarizer's call sends the
conversation's own prefix (an offline summarizer's call reads the covered turns alone)."""
from __future__ import annotations

import pytest_asyncio

from service.config import Settings
from tests.api_client import Client
from tests.app_server import serve

CREATE = """mutation($t: String, $st: String) {
  createSession(title: $t, systemPrompt: "Terse.", summaryStrategy: $st) { id root { id } } }"""
SEND = """mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) {
  userNode { id } reply { id } call { id readIds } } }"""
COMPACT = """mutation($s: ID!, $k: Int) { compact(sessionId: $s, keepRecentTokens: $k) {
  status retainedIds summary { id coversIds } } }"""
PIN = "mutation($n: ID!) { pin(nodeId: $n) { id pinned } }"
UNPIN = "mutation($n: ID!) { unpin(nodeId: $n) { id pinned } }"
BREAK = """query($c: ID!) { call(id: $c) { readIds sharedPrefixReads
  cacheBreak { position cause nodeId previousNodeId } } }"""
LISTED = """query($s: ID!) { session(id: $s) { modelCalls(first: 100) { nodes {
  id cacheBreak { position cause nodeId previousNodeId } } } } }"""
APPEND = ("mutation($s: ID!, $r: Role!, $b: [ContentBlockInput!]!) {"
          " appendMessage(sessionId: $s, role: $r, blocks: $b) { id } }")


@pytest_asyncio.fixture
async def client(db, tenant, stub):
    settings = Settings.from_env({
        "CTXDAG_TENANT": tenant, "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": stub.base_url, "CTXDAG_ANTHROPIC_MODEL": "claude-stub",
        "CTXDAG_ANTHROPIC_MAX_RETRIES": "0"})
    async with serve(settings, db) as url:
        yield Client(url)


def question(i: int) -> str:
    return f"Question {i:03d}. ".ljust(100, "x")


class Conversation:
    def __init__(self, client, sid: str, root: str) -> None:
        self.client, self.id, self.root, self.asked = client, sid, root, 0

    @classmethod
    async def start(cls, client, title: str, strategy: str = "rolling") -> "Conversation":
        made = (await client(CREATE, t=title, st=strategy))["createSession"]
        return cls(client, made["id"], made["root"]["id"])

    async def send(self) -> dict:
        """One turn; the call it made, with its cache break."""
        self.asked += 1
        turn = (await self.client(SEND, s=self.id, c=question(self.asked)))["sendMessage"]
        call = (await self.client(BREAK, c=turn["call"]["id"]))["call"]
        return {**turn, **call}

    async def chat(self, n: int) -> list[str]:
        ids = []
        for _ in range(n):
            turn = await self.send()
            ids += [turn["userNode"]["id"], turn["reply"]["id"]]
        return ids

    async def compact(self, keep: int = 130) -> dict:
        done = (await self.client(COMPACT, s=self.id, k=keep))["compact"]
        assert done["status"] == "COMPACTED", done
        return done


def broke(call: dict) -> tuple | None:
    found = call["cacheBreak"]
    if found is None:
        return None
    return found["cause"], found["position"], found["nodeId"], found["previousNodeId"]


async def test_each_write_names_its_break_pins_and_unpins_apart(client, db):
    c = await Conversation.start(client, "cache breaks")
    turns = await c.chat(6)
    compacted = await c.compact()
    summary, retained = compacted["summary"]["id"], compacted["retainedIds"]
    first, second = turns[0], turns[2]  # the first two questions, both covered
    assert {first, second} <= set(compacted["summary"]["coversIds"])

    after = await c.send()
    assert broke(after) == ("COMPACTION", 1, summary, turns[0])
    assert broke(await c.send()) is None

    # A pin of a covered turn: it renders right after the summary, where the tail began.
    await client(PIN, n=second)
    pinned = await c.send()
    assert pinned["readIds"][:4] == [c.root, summary, second, retained[0]]
    assert broke(pinned) == ("PIN", 2, second, retained[0])
    # A second pin, before the first in chain order: the break is at its place.
    await client(PIN, n=first)
    both = await c.send()
    assert both["readIds"][:4] == [c.root, summary, first, second]
    assert broke(both) == ("PIN", 2, first, second)
    assert broke(await c.send()) is None
    # Unpinning the first: the prompt differs where it was, and it is not a pin.
    await client(UNPIN, n=first)
    unpinned = await c.send()
    assert broke(unpinned) == ("UNPIN", 2, second, first)
    await client(UNPIN, n=second)
    assert broke(await c.send()) == ("UNPIN", 2, retained[0], second)

    # The other writes keep their causes.
    last = await c.send()
    edit = (await client("mutation($n: ID!, $c: String!) { editMessage(nodeId: $n, content: $c)"
                         " { call { id } } }", n=last["userNode"]["id"], c="Edited."))
    edited = (await client(BREAK, c=edit["editMessage"]["call"]["id"]))["call"]
    assert broke(edited)[0] == "EDIT"
    assert broke(edited)[3] == last["userNode"]["id"]
    await client("mutation($s: ID!) { uncompact(summaryId: $s) { summary { id } } }", s=summary)
    assert broke(await c.send()) == ("UNCOMPACTION", 1, turns[0], summary)
    # A turn sent after a checkout of an earlier reply forks there: a sibling, as an edit.
    await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) { id } }",
                 s=c.id, n=turns[5])
    forked = await c.send()
    assert broke(forked) == ("EDIT", 7, forked["userNode"]["id"], turns[6])

    # Every call's break in one query: a statement per kind of record, however many calls.
    before = dict(db.round_trips.by_name)
    listed = (await client(LISTED, s=c.id))["session"]["modelCalls"]["nodes"]
    ran = {k: v - before.get(k, 0) for k, v in db.round_trips.by_name.items()
           if v != before.get(k, 0)}
    assert len(listed) > 15 and sum(1 for call in listed if call["cacheBreak"]) >= 8
    assert ran == {"session_get_many": 1, "session_calls_page": 1, "call_get_many": 1,
                   "node_get_many": 1, "summaries_covering_many": 1}, ran


async def test_a_pinned_tool_answer_breaks_at_the_call_it_answers(client):
    """A pinned tool message renders with the assistant message whose tool uses it answers:
    that message, not the pinned one, is where the prompt differs, and the cause is the pin."""
    c = await Conversation.start(client, "pinned pair")
    ask = (await client(APPEND, s=c.id, r="USER", b=[{"text": {"text": "Read a.py."}}]))
    uses = (await client(APPEND, s=c.id, r="ASSISTANT", b=[
        {"text": {"text": "Reading."}},
        {"toolUse": {"id": "toolu_p1", "name": "read_file", "input": {"path": "a.py"}}}]))
    answer = (await client(APPEND, s=c.id, r="TOOL", b=[
        {"toolResult": {"toolUseId": "toolu_p1", "content": "def f(): pass"}}]))
    uses, answer = uses["appendMessage"]["id"], answer["appendMessage"]["id"]
    assert ask["appendMessage"]["id"]
    await c.chat(5)
    compacted = await c.compact()
    assert {uses, answer} <= set(compacted["summary"]["coversIds"])
    await c.send()
    await client(PIN, n=answer)
    pinned = await c.send()
    assert pinned["readIds"][2:4] == [uses, answer]
    assert broke(pinned) == ("PIN", 2, uses, compacted["retainedIds"][0])


async def test_under_segmented_a_pin_breaks_after_its_own_segment(client):
    c = await Conversation.start(client, "segmented pins", "segmented")
    turns = await c.chat(5)
    one = await c.compact()
    await c.chat(4)
    two = await c.compact()
    s1, s2 = one["summary"]["id"], two["summary"]["id"]
    after = await c.send()
    assert after["readIds"][:3] == [c.root, s1, s2]
    assert broke(after) == ("COMPACTION", 2, s2, two["summary"]["coversIds"][0])

    first = turns[0]
    assert first in one["summary"]["coversIds"]
    await client(PIN, n=first)
    pinned = await c.send()
    assert pinned["readIds"][:4] == [c.root, s1, first, s2]
    assert broke(pinned) == ("PIN", 2, first, s2)
    await client(UNPIN, n=first)
    assert broke(await c.send()) == ("UNPIN", 2, s2, first)
