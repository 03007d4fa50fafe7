"""The `segmented` summary strategy end to end (docs/segmented.md), over the public API on a
real service and a real Neo4j, against the independent model (tests/scenarios/summary_model.py):
every step is checked by `Dag.check` (HEAD, renders of every tip, branch list, capsules,
every summary), every compaction against the model's cut, every call's reads against the
model's render; the prompt-cache promise against the Anthropic request bodies themselves."""
from __future__ import annotations

import json

import pytest

from tests.api_client import Client
from tests.scenarios.summary_model import Summary
from tests.scenarios.test_pins import PinDag
from tests.scenarios.test_summary_strategies import KEEP, SUMMARY, Dag, question
from tests.service_process import ServiceProcess

ANTHROPIC = ("query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) {"
             " a: request(format: ANTHROPIC_MESSAGES) } } }")


def blocks(request) -> list[str]:
    """The request's system and message blocks in order, each as its JSON text without
    cache_control (the breakpoints move to the newest stand-in; the content does not)."""
    body = json.loads(request) if isinstance(request, str) else request

    def bare(block) -> str:
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        return json.dumps({k: v for k, v in block.items() if k != "cache_control"},
                          sort_keys=True)

    out = [bare(b) for b in body.get("system") or []]
    for message in body["messages"]:
        content = message["content"]
        for block in [content] if isinstance(content, str) else content:
            out.append(message["role"] + bare(block))
    return out


async def anthropic(d: Dag, head: str | None = None) -> list[str]:
    data = await d.client(ANTHROPIC, s=d.id, h=head)
    return blocks(data["session"]["render"]["a"])


async def test_k_compactions_on_a_chain_keep_every_earlier_prefix(client, checked):
    d = await Dag.start(client, "segmented chain", "segmented")
    checked.append(d.id)
    m = d.model
    main = await d.chat(4)
    stand_ins: list[str] = []
    for k in range(1, 5):
        before = await anthropic(d)
        s = await d.compact()
        assert s is not None, f"compaction {k} wrote nothing"
        stand_ins.append(s)
        state = await d.check(head=main[-1])
        render = state["session"]["render"]
        assert render["nodeIds"][:k + 1] == [m.root, *stand_ins], render
        assert m.summaries[s].absorbed is None
        after = await anthropic(d)
        # ROOT (the system block) and S1 … S(k-1): the same bytes before and after.
        assert after[:k] == before[:k], f"compaction {k} changed the prompt's prefix"
        assert after[k] != before[k]
        main += await d.chat(3, start=10 * k)
        await d.check(head=main[-1])
    # Each segment holds only the turns it newly covered: disjoint, in chain order.
    covers = [m.summaries[s].covers for s in stand_ins]
    chain = m.chain(main[-1])
    assert [n for c in covers for n in c] == chain[1:1 + sum(map(len, covers))]
    # The call after the last compaction read the stand-ins, and the graph has a capsule each.
    assert m.capsules() == set(stand_ins)


async def test_a_linear_chain_renders_the_turns_rolling_would(client, checked):
    dags = [await Dag.start(client, f"same turns {st}", st) for st in ("rolling", "segmented")]
    checked.extend(d.id for d in dags)

    async def turns_of(d: Dag) -> list[int]:
        """Where the verbatim turns of HEAD's render lie on its chain (the offline replies'
        texts count the prompt's messages, so they differ between strategies)."""
        render = await d.render_at()
        chain = d.model.chain(d.model.head)
        return [chain.index(n) for n in render["nodeIds"] if n not in d.model.summaries]

    for step in range(3):
        for d in dags:
            await d.chat(3, start=10 * step)
            await d.compact()
            await d.check()
        rolling, segmented = [await turns_of(d) for d in dags]
        assert rolling == segmented, f"after compaction {step + 1}"


async def test_forks_render_only_the_segments_on_their_chain(client, checked):
    d = await Dag.start(client, "segmented forks", "segmented")
    checked.append(d.id)
    m = d.model
    main = await d.chat(6)
    s1 = await d.compact()
    main += await d.chat(4, start=6)
    s2 = await d.compact()
    await d.check(head=main[-1])
    S1, S2 = m.summaries[s1], m.summaries[s2]
    assert S2.splice == S1.last and not set(S1.covers) & set(S2.covers)
    replies = [n for n in main if m.turns[n].role == "assistant"]

    # Retried inside S1's segment: neither segment lies on its chain; verbatim.
    f0 = await d.retry(next(n for n in replies if n in S1.covers[1:]))
    state = await d.check(head=f0)
    assert state["session"]["render"]["summaryId"] is None
    # Retried inside S2's segment: S1 alone, then its chain verbatim.
    f1 = await d.retry(next(n for n in replies if n in S2.covers))
    state = await d.check(head=f1)
    assert state["session"]["render"]["nodeIds"][:2] == [m.root, s1]
    assert s2 not in state["session"]["render"]["nodeIds"]
    # Compacting that fork adds a segment there only; main still renders S1, S2.
    fork = [f1] + await d.chat(4, start=30)
    s3 = await d.compact()
    await d.check(head=fork[-1])
    assert m.summaries[s3].splice not in S2.covers
    assert m.render(fork[-1])[:3] == [m.root, s1, s3]
    await d.checkout(main[-1])
    state = await d.check(head=main[-1])
    assert state["session"]["render"]["nodeIds"][:3] == [m.root, s1, s2]
    # An edit in the retained tail inherits both; a branch deletion takes the fork's s3.
    edited = await d.edit(next(n for n in S2.retained if m.turns[n].role == "user"),
                          "Question 009, edited. ".ljust(100, "x"))
    await d.check(head=edited[1])
    await d.delete(fork[-1])
    await d.check()
    assert m.summaries[s3].deleted


async def three_segments(d: Dag) -> tuple[list[str], tuple[str, str, str]]:
    """Four turns compacted, then twice three more: HEAD's turns and the three summaries."""
    main, summaries = await d.chat(4), []
    for k in range(3):
        if k:
            main += await d.chat(3, start=10 * k)
        summaries.append(await d.compact())
    return main, tuple(summaries)


async def test_uncompact_of_a_middle_segment_renders_its_turns_between_the_others(
        client, service, checked):
    d = await Dag.start(client, "segmented uncompact", "segmented")
    checked.append(d.id)
    m = d.model
    main, (s1, s2, s3) = await three_segments(d)
    await d.check(head=main[-1])
    await d.uncompact(s2)
    state = await d.check(head=main[-1])
    ids = state["session"]["render"]["nodeIds"]
    S2 = m.summaries[s2]
    assert ids[:2] == [m.root, s1] and ids[2:2 + len(S2.covers)] == list(S2.covers)
    assert ids[2 + len(S2.covers)] == s3
    # The next compaction covers only what follows s3; then undo the first segment too.
    main += await d.chat(3, start=30)
    s4 = await d.compact()
    await d.check(head=main[-1])
    assert m.summaries[s4].splice == m.summaries[s3].last
    await d.uncompact(s1)
    await d.check(head=main[-1])
    before = await d.check()
    service.restart()
    assert await d.check() == before


async def test_pins_render_after_their_own_segment_and_tool_pairs_stay_whole(client, checked):
    d = await PinDag.start(client, "segmented pins", "segmented")
    checked.append(d.id)
    m = d.model
    main = await d.chat(2)
    main += await d.tool_round("alpha")
    main += await d.chat(2, start=2)
    result = main[6]  # the tool message of the round
    await d.pin(main[0])
    await d.pin(result)
    await d.check(head=main[-1])
    s1 = await d.compact()
    await d.check(head=main[-1])
    main += await d.tool_round("beta")
    main += await d.chat(3, start=10)
    s2 = await d.compact()
    await d.check(head=main[-1])
    render = m.render(main[-1])
    kept1 = m.kept(s1, main[-1])
    assert main[5] in kept1, "the tool use comes along with its pinned result"
    assert render[:2 + len(kept1) + 1] == [m.root, s1, *kept1, s2]
    # A pin on a turn s2 covers renders after s2, not after s1.
    covered = next(n for n in m.summaries[s2].covers if m.turns[n].role == "assistant")
    await d.pin(covered)
    await d.check(head=main[-1])
    assert m.render(main[-1]).index(covered) > m.render(main[-1]).index(s2)
    main += await d.say(question(40))
    await d.check(head=main[-1])


async def test_switching_to_segmented_reads_summaries_written_under_rolling(client, checked):
    d = await Dag.start(client, "switch to segmented", "rolling")
    checked.append(d.id)
    m = d.model
    main = await d.chat(4)
    await d.compact()
    main += await d.chat(3, start=10)
    rolling = await d.compact()  # absorbs the first one
    await d.check(head=main[-1])
    await d.set_strategy("segmented")
    state = await d.check(head=main[-1])
    assert state["session"]["render"]["nodeIds"][:2] == [m.root, rolling]
    main += await d.chat(3, start=20)
    segment = await d.compact()
    await d.check(head=main[-1])
    assert m.render(main[-1])[:3] == [m.root, rolling, segment]
    await d.set_strategy("branch")
    await d.check(head=main[-1])



@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_switching_from_segmented_absorbs_the_summary_the_render_shows(
        client, checked, strategy):
    """Two segments, then rolling (or branch): the render shows the last stand-in after the
    first segment's turns, and the next compaction relays and absorbs that summary, so the
    render shrinks and none of its turns come back verbatim."""
    d = await Dag.start(client, f"segmented then {strategy}", "segmented")
    checked.append(d.id)
    m = d.model
    main = await d.chat(4)
    await d.compact()
    main += await d.chat(3, start=10)
    second = await d.compact()
    main += await d.chat(2, start=20)
    await d.set_strategy(strategy)
    before = (await d.check(head=main[-1]))["session"]["render"]
    assert second in before["nodeIds"] and before["nodeIds"][1] != second, before
    third = await d.compact(keep=40)
    assert third is not None and m.summaries[third].absorbed == second
    after = (await d.check(head=main[-1]))["session"]["render"]
    assert not set(m.summaries[second].covers) & set(after["nodeIds"]), after
    assert len(after["nodeIds"]) < len(before["nodeIds"])

# --- nesting: merges into a nested summary (docs/segmented.md, "Nesting") -----------------

MERGE_SHARE = "0.0006"  # of the default 200,000-token window: merges past 120 tokens
MERGE_AT = 120


@pytest.fixture(scope="module")
def merging(service):
    """A second service on the same tenant whose stand-ins merge after a few compactions."""
    same = ("NEO4J_URI", "NEO4J_USER", "NEO4J_PASSWORD", "CTXDAG_TENANT")
    with ServiceProcess({**{k: service.env[k] for k in same},
                         "CTXDAG_SEGMENT_MERGE_SHARE": MERGE_SHARE}) as process:
        yield process


class MergeDag(Dag):
    """A Dag whose compactions may merge: each one's nested summary (or its absence) is
    checked against the model's merge rule, and the model takes it in."""

    async def compact(self, keep: int = KEEP, head: str | None = None) -> str | None:
        m = self.model
        at = head or m.head
        before = self._before(at)
        data = await self.client(
            f"mutation($s: ID!, $k: Int, $h: ID) {{ compact(sessionId: $s, keepRecentTokens: $k,"
            f" headId: $h) {{ status message mergeError summary {{ {SUMMARY} }}"
            f" nested {{ {SUMMARY} nestedIds }} }} }}", s=self.id, k=keep, h=head)
        result = data["compact"]
        if m.cut(at, keep) is None:
            assert (result["status"], result["summary"]) == ("SKIPPED", None), result
            return None
        assert result["status"] == "COMPACTED" and result["mergeError"] is None, result
        sid = self._compacted(result["summary"], at, keep, *before)
        await self._learn_tokens(sid)
        due = m.merge_due(at, MERGE_AT)
        nested = result["nested"]
        assert (nested and nested["nestedIds"]) == (list(due) or None), (
            f"compaction {self.show(sid)}: merged {nested and self.show(nested['nestedIds'])},"
            f" the model merges {self.show(due)}")
        if nested:
            self._take_nested(nested, due)
            await self._learn_tokens(nested["id"])
        return sid

    def _take_nested(self, n: dict, due: tuple[str, ...]) -> None:
        m = self.model
        covers = tuple(turn for x in due for turn in m.summaries[x].covers)
        where = f"nested {n['id'][:8]} of {self.show(due)}"
        assert n["coversIds"] == list(covers), where
        assert (n["absorbedId"], n["retainedIds"], n["compactedHeadId"]) == (
            None, [], covers[-1]), (where, n)
        assert n["strategy"] == "segmented" and not n["retired"] and not n["deleted"], where
        self.labels[n["id"]] = f"N{n['seq']}"
        m.compacted(Summary(n["id"], n["seq"], m.summaries[due[0]].splice, covers, (), None,
                            None, covers[-1], "segmented", nested=due))

    async def _learn_tokens(self, sid: str) -> None:
        self.model.summaries[sid].tokens = (await self.nodes([sid]))[sid]["tokens"]


async def compact_until_merged(d: MergeDag, start: int) -> tuple[list[str], str]:
    """Compactions on HEAD's chain, three turns between each, until one merges: the turns
    written and the nested summary."""
    written: list[str] = []
    for k in range(12):
        written += await d.chat(3, start=start + 10 * k)
        before = set(d.model.summaries)
        await d.compact()
        new = [s for s in d.model.summaries if s not in before and d.model.summaries[s].nested]
        await d.check()
        if new:
            return written, new[0]
    raise AssertionError("twelve compactions and no merge")


async def test_stand_ins_merge_into_a_nested_summary_and_uncompact_restores_them(
        merging, checked):
    """Segments pile up until their tokens pass the merge point; then the oldest merge into
    one nested summary, the render is [ROOT, N, later stand-ins…, tail], every earlier
    compaction kept the prefix, a fork inside a merged segment renders it verbatim, a summary
    nested in a live one cannot be undone alone, and uncompacting the nested one brings its
    segments back — across a restart."""
    client = Client(merging.url)
    d = await MergeDag.start(client, "segmented merge", "segmented")
    checked.append(d.id)
    m = d.model
    main = await d.chat(4)
    main += (await compact_until_merged(d, 10))[0]
    nested = next(s for s in m.summaries.values() if s.nested)
    render = (await d.check())["session"]["render"]["nodeIds"]
    assert render[:2] == [m.root, nested.id], d.show(render)
    assert all(x not in render for x in nested.nested)

    errors = await client.errors("mutation($x: ID!) { uncompact(summaryId: $x) { summary { id } } }",
                                 x=nested.nested[0])
    assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors
    assert nested.id in errors[0]["message"], errors
    await d.check()

    # A fork off a turn inside the first merged segment renders that segment verbatim.
    inner = next(n for n in m.summaries[nested.nested[0]].covers if m.turns[n].role == "user")
    fork = list(await d.edit(inner, "Question 777, edited. ".ljust(100, "x")))
    await d.check(head=fork[-1])
    await d.checkout(main[-1])

    merging.restart()
    await d.check()
    await d.uncompact(nested.id)
    render = (await d.check())["session"]["render"]["nodeIds"]
    assert [x for x in render if x in m.summaries][:len(nested.nested)] == list(nested.nested)
    merging.restart()
    await d.check()


async def test_a_nested_summary_merges_again_and_a_deleted_branch_takes_it(merging, checked):
    """Merges go on as segments pile up (a nested summary is merged into the next), rolling
    and branch render a merged session as the model says, and deleting the branch that holds
    the covered turns takes every summary covering them."""
    d = await MergeDag.start(Client(merging.url), "segmented merges twice", "segmented")
    checked.append(d.id)
    m = d.model
    await d.chat(4)
    _, first = await compact_until_merged(d, 10)
    _, second = await compact_until_merged(d, 200)
    assert second != first
    assert first in m.summaries[second].nested
    # The other strategies read a nested summary as the summary of its turns it is.
    for strategy in ("rolling", "branch", "segmented"):
        await d.set_strategy(strategy)
        await d.check()
    tip = m.head
    fork_at = next(n for n in m.summaries[first].covers if m.turns[n].role == "user")
    branch = list(await d.edit(fork_at, "Question 888, edited. ".ljust(100, "x")))
    branch += await d.chat(2, start=300)
    await d.check(head=branch[-1])
    gone = await d.delete(tip)
    assert {first, second} <= gone
    await d.check()


async def test_up_to_compacts_an_undone_gap_and_names_the_segment_that_covers_a_turn(
        client, checked):
    """compact(upTo:) on a turn rendered verbatim between two stand-ins (an undone middle
    segment) covers that gap through it, leaving the stand-ins around it as they are; on a
    turn a stand-in covers it is BAD_INPUT naming that summary, and writes nothing."""
    d = await Dag.start(client, "segmented upTo", "segmented")
    checked.append(d.id)
    m = d.model
    main, (s1, s2, s3) = await three_segments(d)
    await d.uncompact(s2)
    gap = m.summaries[s2].covers
    before = await anthropic(d)

    inside = next(n for n in m.summaries[s1].covers if m.turns[n].role == "user")
    errors = await client.errors("mutation($s: ID!, $u: ID) { compact(sessionId: $s, upTo: $u)"
                                 " { status } }", s=d.id, u=inside)
    assert errors[0]["extensions"]["code"] == "BAD_INPUT" and s1 in errors[0]["message"], errors
    await d.check()

    up_to = gap[1]  # the gap's first exchange: an assistant reply answering its question
    assert m.turns[up_to].role == "assistant"
    data = await client(f"mutation($s: ID!, $u: ID) {{ compact(sessionId: $s, upTo: $u) {{"
                        f" status summary {{ {SUMMARY} }} }} }}", s=d.id, u=up_to)
    s = data["compact"]["summary"]
    assert data["compact"]["status"] == "COMPACTED" and s["coversIds"] == list(gap[:2]), data
    assert (s["retainedIds"], s["compactedHeadId"], s["absorbedId"]) == ([], up_to, None), s
    d.labels[s["id"]] = f"S{s['seq']}"
    m.compacted(Summary(s["id"], s["seq"], m.summaries[s1].last, tuple(gap[:2]), (), None,
                        None, up_to, "segmented"))
    render = (await d.check(head=main[-1]))["session"]["render"]["nodeIds"]
    assert render[:3] == [m.root, s1, s["id"]] and render[3:3 + len(gap) - 2] == list(gap[2:])
    assert render[3 + len(gap) - 2] == s3
    # The prompt through s1 keeps its bytes (the gap's summary follows s1 in the same text
    # block: no breakpoint falls between them).
    after = await anthropic(d)
    through_s1 = before[1].index("</summary>") + len("</summary>")
    assert after[0] == before[0] and after[1][:through_s1] == before[1][:through_s1]
    assert after[1] != before[1]
