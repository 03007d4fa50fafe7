"""Search over the public API, on a real service and a real Neo4j: every state a hit can be in
(IN_CONTEXT, PINNED, SUMMARIZED, NOT_RENDERED, OTHER_BRANCH, DELETED) through compactions,
uncompacts, pins, forks, retries, edits and branch deletions, under every summary strategy;
and search across sessions and tenants.

Every user message plants a word of its own. After every step, for every word planted so
far, `search` at HEAD (and with the headId of another tip) must find exactly the nodes whose
text holds the word (their texts as the API shows them), each placed as the independent
model (tests/scenarios/summary_model.py, driven by the scenario's moves and checked against
the service's renders) says: a summary is IN_CONTEXT when the head's render shows it, else
NOT_RENDERED; a turn on the head's path is IN_CONTEXT when rendered, PINNED when rendered
after a summary the render shows that covers it, else SUMMARIZED by that summary; a turn off
the path is OTHER_BRANCH, naming the newest summary covering it there; anything a branch
deletion took is DELETED.
"""
from __future__ import annotations

import re
import uuid

import pytest

from tests.api_client import Client
from tests.scenarios.test_pins import PinDag
from tests.scenarios.test_summary_strategies import CHUNK
from tests.service_process import ServiceProcess

HIT = ("node { id } sessionId sessionTitle matchedIn session { id title }"
       " context { state headId summaryId summaryRendered }")
WORDS_PER_REQUEST = 8
_TOKEN = re.compile(r"[0-9a-z]+")


def words_of(text: str | None) -> set[str]:
    """The words the index holds of a text as our planted words are written: runs of ASCII
    letters and digits, lower-cased."""
    return set(_TOKEN.findall((text or "").lower()))


async def search_many(client: Client, words: list[str], session_id: str | None = None,
                      head_id: str | None = None) -> dict[str, list[dict]]:
    """Each word's hits (all of them: one page of at most 100), a few words a request."""
    out: dict[str, list[dict]] = {}
    for i in range(0, len(words), WORDS_PER_REQUEST):
        part = words[i:i + WORDS_PER_REQUEST]
        args = "".join(f", $q{j}: String!" for j in range(len(part)))
        body = " ".join(f"w{j}: search(query: $q{j}, sessionId: $s, headId: $h, first: 100)"
                        f" {{ nodes {{ {HIT} }} pageInfo {{ hasNextPage }} }}"
                        for j in range(len(part)))
        data = await client(f"query($s: ID, $h: ID{args}) {{ {body} }}", s=session_id,
                            h=head_id, **{f"q{j}": w for j, w in enumerate(part)})
        for j, word in enumerate(part):
            found = data[f"w{j}"]
            assert found["pageInfo"]["hasNextPage"] is False, word
            out[word] = found["nodes"]
    return out


class SearchDag(PinDag):
    """A session whose user messages each plant a word, with the texts of its nodes as the
    API shows them."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.title = ""
        self.prefix = ""
        self.words: list[str] = []
        self.texts: dict[str, str] = {}
        self.steps = 0

    @classmethod
    async def begin(cls, client: Client, title: str, strategy: str, prefix: str) -> "SearchDag":
        d = await cls.start(client, title, strategy)
        d.title, d.prefix = title, prefix
        return d

    def plant(self) -> str:
        word = f"{self.prefix}{len(self.words)}"
        self.words.append(word)
        return f"Question {len(self.words):03d} about {word}. ".ljust(100, "x")

    async def ask(self) -> list[str]:
        return list(await self.say(self.plant()))

    async def edit_planting(self, node: str) -> list[str]:
        return list(await self.edit(node, self.plant()))

    async def learn_texts(self) -> None:
        m = self.model
        new = [n for n in [*m.turns, *m.summaries] if n not in self.texts]
        for i in range(0, len(new), CHUNK):
            part = new[i:i + CHUNK]
            args = ", ".join(f"$n{j}: ID!" for j in range(len(part)))
            body = " ".join(f"n{j}: node(id: $n{j}) {{ ... on Message {{ id content }} }}"
                            for j in range(len(part)))
            data = await self.client(f"query({args}) {{ {body} }}",
                                     **{f"n{j}": n for j, n in enumerate(part)})
            for j, n in enumerate(part):
                assert data[f"n{j}"]["id"] == n
                self.texts[n] = data[f"n{j}"]["content"] or ""

    # ---- the independent expectation ---------------------------------------------------
    def expected(self, node: str, head: str) -> tuple[str, str | None, bool | None]:
        """(state, summaryId, summaryRendered) of `node` at `head`, from the model alone."""
        m = self.model
        rendered = m.render(head)
        if node in m.summaries:
            if m.summaries[node].deleted:
                return "DELETED", None, None
            return ("IN_CONTEXT" if node in rendered else "NOT_RENDERED"), None, None
        if m.turns[node].deleted:
            return "DELETED", None, None
        holding = sorted((s for s in m.summaries.values() if node in s.covers),
                         key=lambda s: s.seq, reverse=True)
        shown = [s.id for s in holding if s.id in rendered]
        assert len(shown) <= 1, f"two rendered summaries cover {self.show(node)}"
        if node not in m.chain(head):
            assert not shown, f"{self.show(node)} is off the path yet summarized there"
            newest = holding[0].id if holding else None
            return "OTHER_BRANCH", newest, (False if newest else None)
        if node in rendered:
            if shown:
                assert node in m.pins, f"{self.show(node)} rendered after its summary unpinned"
                return "PINNED", shown[0], True
            return "IN_CONTEXT", None, None
        assert shown, f"{self.show(node)} on the path is neither rendered nor summarized"
        return "SUMMARIZED", shown[0], True

    # ---- the check after every step ----------------------------------------------------
    async def look(self, what: str, heads: list[str | None] | None = None) -> None:
        """Every planted word's hits at HEAD and at another tip (or at `heads`)."""
        self.steps += 1
        await self.check()
        await self.learn_texts()
        m = self.model
        if heads is None:
            others = [t for t in m.tips() if t != m.head]
            heads = [None] + others[-1:]
        for head in heads:
            at = head or m.head
            found = await search_many(self.client, self.words, self.id, head)
            for word, hits in found.items():
                where = f"step {self.steps} ({what}), '{word}' at {self.show(at)}"
                expected_ids = {n for n, text in self.texts.items() if word in words_of(text)}
                assert expected_ids, f"{where}: the planted word is in no text"
                got = {h["node"]["id"]: h for h in hits}
                assert len(got) == len(hits), f"{where}: a node twice"
                assert set(got) == expected_ids, (
                    f"{where}: hits {self.show(sorted(got))}, expected"
                    f" {self.show(sorted(expected_ids))}")
                for node, hit in got.items():
                    assert (hit["sessionId"], hit["sessionTitle"], hit["matchedIn"],
                            hit["session"]) == (self.id, self.title, "TEXT",
                                                {"id": self.id, "title": self.title}), hit
                    c = hit["context"]
                    state = (c["state"], c["summaryId"], c["summaryRendered"])
                    assert c["headId"] == at, (where, c)
                    want = self.expected(node, at)
                    assert state == want, (
                        f"{where}: {self.show(node)} is {c['state']} (summary"
                        f" {self.show(c['summaryId'])}, rendered {c['summaryRendered']}),"
                        f" expected {want[0]} (summary {self.show(want[1])}, rendered"
                        f" {want[2]}); render {self.show(m.render(at))}")

    def states(self, head: str | None = None) -> set[str]:
        at = head or self.model.head
        return {self.expected(n, at)[0] for n, t in self.texts.items()
                if words_of(t) & set(self.words)}


def latest(d: SearchDag, head: str | None = None) -> str | None:
    """The newest live, unretired summary that renders at `head` (HEAD)."""
    m = d.model
    shown = [n for n in m.render(head or m.head) if n in m.summaries]
    return max(shown, key=m.seq_of) if shown else None


@pytest.mark.parametrize("strategy", ["rolling", "branch", "segmented"])
async def test_every_hit_state_through_compaction_pins_forks_and_deletes(
        client, checked, strategy):
    d = await SearchDag.begin(client, f"search states {strategy}", strategy,
                              f"w{strategy[0]}{uuid.uuid4().hex[:6]}x")
    checked.append(d.id)
    m = d.model
    seen: set[str] = set()

    async def look(what: str, heads=None) -> None:
        await d.look(what, heads)
        seen.update(d.states())
        for tip in m.tips():
            seen.update(d.states(tip))

    main: list[str] = []
    for _ in range(5):
        main += await d.ask()
        await look("send")
    await d.compact()
    await look("compact")
    assert "SUMMARIZED" in d.states() and "IN_CONTEXT" in d.states()
    main += await d.ask()
    await look("send after a compaction")
    await d.pin(main[0])
    await look("pin a covered question")
    assert d.expected(main[0], m.head)[0] == "PINNED"
    main += await d.ask()
    await look("send")
    await d.compact()
    await look("compact again")
    await d.unpin(main[0])
    await look("unpin")
    assert d.expected(main[0], m.head)[0] == "SUMMARIZED"

    # A fork off an older reply: what follows it on main is OTHER_BRANCH at the fork.
    await d.checkout(main[5])
    await look("checkout an older reply")
    assert "OTHER_BRANCH" in d.states()
    fork_a = await d.ask()
    await look("send on the fork")
    fork_a += await d.ask()
    await look("send on the fork again", heads=[None, main[-1]])
    fork_a += await d.ask()
    await d.compact()
    await look("compact the fork", heads=[None, main[-1]])
    await d.checkout(main[-1])
    await look("checkout main's tip", heads=[None, fork_a[-1], main[3]])  # and an inner node

    # A retry and an edit: siblings of main's last turns.
    main[-1] = await d.retry(main[-1])
    await look("retry main's tip")
    fork_b = await d.edit_planting(main[-2])
    await look("edit main's last question")
    fork_b += await d.ask()
    await look("send on the edit")
    undone = latest(d)
    if undone is not None:
        await d.uncompact(undone)
        await look("uncompact what renders at HEAD")
        assert d.expected(undone, m.head)[0] == "NOT_RENDERED"
    fork_b += await d.ask()
    await look("send after the uncompact")
    await d.compact()
    await look("compact the edit's branch")
    await d.pin(fork_b[0])
    await look("pin on the edit's branch")

    # Branch deletions: their turns and their summaries become DELETED.
    await d.delete(fork_a[-1])
    await look("delete the fork")
    assert "DELETED" in d.states()
    await d.checkout(main[-1])
    await look("checkout main's tip again")
    await d.delete(fork_b[-1])
    await look("delete the edit's branch")
    main += await d.ask()
    await look("send on main")
    main += await d.ask()
    await d.compact()
    await look("compact main")
    undone = latest(d)
    if undone is not None:
        await d.uncompact(undone)
        await look("uncompact main's summary")
    main += await d.ask()
    await look("send")
    assert d.steps >= 25
    assert {"IN_CONTEXT", "PINNED", "SUMMARIZED", "NOT_RENDERED", "OTHER_BRANCH",
            "DELETED"} <= seen, seen


# ---- across sessions and tenants ------------------------------------------------------------

@pytest.fixture(scope="module")
def two_tenants(neo4j_server):
    """A service with two tenants, each named by its bearer token."""
    run = uuid.uuid4().hex[:8]
    tokens = {f"ta-{run}": f"search-a-{run}", f"tb-{run}": f"search-b-{run}"}
    process = ServiceProcess({"NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
                              "NEO4J_PASSWORD": neo4j_server.password,
                              "CTXDAG_API_TOKENS": ",".join(f"{t}={n}"
                                                            for t, n in tokens.items())})
    with process:
        process.clients = [Client(process.url, token) for token in tokens]
        yield process


async def test_search_spans_a_tenants_sessions_and_never_another_tenant(two_tenants):
    a, b = two_tenants.clients
    shared = f"shared{uuid.uuid4().hex[:8]}"
    titled = f"title{uuid.uuid4().hex[:8]}"
    dags = {"a1": await SearchDag.begin(a, f"Alpha {titled}", "rolling", "wa"),
            "a2": await SearchDag.begin(a, "Alpha two", "branch", "wa"),
            "b1": await SearchDag.begin(b, f"Beta {titled}", "rolling", "wa")}
    mine: dict[str, list[str]] = {}
    for name, d in dags.items():
        mine[name] = []
        for i in range(4):
            mine[name] += await d.say(f"Note {i} of {name} mentions {shared}. ".ljust(100, "x"))
    await dags["a1"].compact()
    await dags["a1"].checkout(mine["a1"][5])  # a1's later turns are OTHER_BRANCH at its HEAD
    for d in dags.values():
        await d.check()
        await d.learn_texts()
        d.words = [shared]

    for client, names in ((a, ("a1", "a2")), (b, ("b1",))):
        hits = (await search_many(client, [shared]))[shared]
        by_id = {h["node"]["id"]: h for h in hits}
        expected = {n: name for name in names for n, t in dags[name].texts.items()
                    if shared in words_of(t)}
        assert set(by_id) == set(expected), "a tenant's search finds its own sessions' nodes only"
        for node, name in expected.items():
            d, hit = dags[name], by_id[node]
            assert (hit["sessionId"], hit["sessionTitle"], hit["session"]) == (
                d.id, d.title, {"id": d.id, "title": d.title}), hit
            c = hit["context"]
            assert c["headId"] == d.model.head, "placed at its own session's HEAD"
            assert (c["state"], c["summaryId"], c["summaryRendered"]) == d.expected(
                node, d.model.head), (name, d.show(node), c)
        # One session of the tenant: only its hits.
        one = dags[names[0]]
        scoped = (await search_many(client, [shared], one.id))[shared]
        assert {h["node"]["id"] for h in scoped} == {n for n, s in expected.items()
                                                     if s == names[0]}
    a_states = {dags["a1"].expected(n, dags["a1"].model.head)[0]
                for n, t in dags["a1"].texts.items() if shared in words_of(t)}
    assert {"SUMMARIZED", "IN_CONTEXT", "OTHER_BRANCH"} <= a_states, a_states
    # Placed at another session's node: refused, in the same tenant too.
    errors = await a.errors("query($s: ID!, $h: ID!) { search(query: \"x\", sessionId: $s,"
                            " headId: $h) { nodes { node { id } } } }",
                            s=dags["a1"].id, h=dags["a2"].model.head)
    assert errors[0]["extensions"]["code"] in ("NOT_FOUND", "BAD_INPUT"), errors

    # A title matches its session's ROOT, in its tenant only.
    for client, name in ((a, "a1"), (b, "b1")):
        hits = (await search_many(client, [titled]))[titled]
        d = dags[name]
        assert [(h["node"]["id"], h["matchedIn"], h["sessionTitle"]) for h in hits] == [
            (d.model.root, "TITLE", d.title)], hits
    # Another tenant's session cannot be searched, nor placed at.
    for client, other in ((b, dags["a1"]), (a, dags["b1"])):
        errors = await client.errors("query($s: ID!) { search(query: \"x\", sessionId: $s)"
                                     " { nodes { node { id } } } }", s=other.id)
        assert errors[0]["extensions"]["code"] == "NOT_FOUND", errors
        errors = await client.errors("query($s: ID!, $h: ID!) { search(query: \"x\","
                                     " sessionId: $s, headId: $h) { nodes { node { id } } } }",
                                     s=dags["a2"].id if other is dags["b1"] else dags["b1"].id,
                                     h=other.model.head)
        assert errors[0]["extensions"]["code"] in ("NOT_FOUND", "BAD_INPUT"), errors
