"""Provenance through the real anthropic SDK (against the stub) and the analyst queries."""
import pytest

from service.errors import NotFound
from service.store import Purpose
from service.store.calls import diff_reads
from service.turns.messages import to_messages
from service.turns.replay import replay
from tests.integration.helpers import KEEP_FOUR, chat, head_id, session_calls, turns as texts
from tests.provider_requests import uncached
from tests.stubs.anthropic_stub import overloaded, prompt_too_long, reply


@pytest.fixture
def runtime(anthropic_runtime):
    return anthropic_runtime(CTXDAG_ANTHROPIC_MAX_RETRIES="0")


def sent(stub):
    return [r.body for r in stub.requests if r.path == "/v1/messages"]


async def test_every_call_reads_exactly_the_prompt_the_provider_received(runtime, stub):
    ledger, turns = runtime.ledger, runtime.turns
    assert runtime.provider.name == "anthropic"
    session = await ledger.sessions.create("p", "You are a careful assistant.")
    stub.enqueue(reply("First answer."), reply("Second answer."))
    first = await turns.send_message(session.id, "First question.")
    second = await turns.send_message(session.id, "Second question.")
    assert second.reply.content == "Second answer."
    assert second.reply.metadata["provider"] == "anthropic"
    for result, body in zip((first, second), sent(stub)):
        nodes = await ledger.calls.reads(result.call_id)
        system, messages = to_messages(nodes)
        body = uncached(body)  # the breakpoints aside (docs/concepts/provenance.md)
        assert body["system"] == system and body["messages"] == messages
        assert body["model"] == "claude-stub"
    call = await ledger.calls.get(second.call_id)
    assert call.model == "claude-stub" and call.input_tokens is not None


async def test_overflow_at_the_provider_compacts_and_retries_through_the_sdk(runtime, stub):
    ledger = runtime.ledger
    session = await ledger.sessions.create()
    await chat(ledger, session, *texts(8))
    stub.enqueue(prompt_too_long(), reply("Summary of questions 0 to 3."), reply("Answer."))
    result = await runtime.turns.send_message(session.id, "Question 008.")
    assert result.reply.content == "Answer."
    assert result.compaction.trigger == "passive"
    bodies = sent(stub)
    assert len(bodies) == 3
    calls = await ledger.calls.get_many([c.id for c in await session_calls(ledger, session.id)])
    assert [(c.purpose, c.error_code) for c in calls] == [
        (Purpose.CHAT, "CONTEXT_OVERFLOW"), (Purpose.SUMMARIZE, None), (Purpose.CHAT, None)]
    for call, body in zip(calls, bodies):
        nodes = await ledger.calls.reads(call.id)
        body = uncached(body)
        if call.purpose is Purpose.CHAT:
            assert (body.get("system", ""), body["messages"]) == to_messages(nodes)
        else:  # the conversation's own request, the summary instruction appended
            _, messages = to_messages(nodes)
            assert body["messages"][:-1] == messages[:-1]


async def test_a_provider_outage_mid_turn_is_recorded_on_the_call(runtime, stub):
    ledger = runtime.ledger
    session = await ledger.sessions.create()
    stub.enqueue(overloaded())
    result = await runtime.turns.send_message(session.id, "Hello?")
    assert result.reply is None and result.error.code == "MODEL_UNAVAILABLE"
    call = await ledger.calls.get(result.call_id)
    assert "529" in call.error_message
    assert await head_id(ledger, session.id) == result.user_node.id


async def test_analyst_queries_on_a_session_with_forks_and_two_compactions(
        ledger, compactor, turns):
    session = await ledger.sessions.create("audit", "sys")
    m = await chat(ledger, session, *texts(8))
    before = await turns.send_message(session.id, "Question 008. ".ljust(100, "x"))
    s1 = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    after_one = await turns.send_message(session.id, "Question 010. ".ljust(100, "x"))
    fork = await turns.edit(m[2].id, "Question 002, other. ".ljust(100, "x"))
    await ledger.head.set_head(session.id, after_one.reply.id)
    s2 = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    after_two = await turns.send_message(session.id, "Question 012. ".ljust(100, "x"))

    # What a call read, in prompt order, with content.
    reads = await ledger.calls.reads(after_two.call_id)
    assert [n.id for n in reads][:2] == [session.root_id, s2.id]
    assert reads[-1].content.startswith("Question 012.")

    # Which calls read a node: ROOT was read by every call that rendered a chain.
    readers = await ledger.calls.reading(session.root_id)
    assert {r.call.id for r in readers} >= {before.call_id, after_one.call_id, fork.call_id,
                                            after_two.call_id}
    assert all(r.position == 0 for r in readers)
    by_summary = await ledger.calls.reading(s1.id)
    assert {r.call.purpose for r in by_summary} == {Purpose.CHAT, Purpose.SUMMARIZE}
    assert [r.position for r in by_summary if r.call.id == after_one.call_id] == [1]

    # The difference between two calls' reads.
    first, second = await ledger.calls.get_many([before.call_id, after_one.call_id])
    diff = diff_reads(first.read_ids, second.read_ids)
    assert set(m[i].id for i in range(4)) <= set(diff.dropped)
    assert s1.id in diff.added and after_one.user_node.id in diff.added
    assert diff.kept[0] == session.root_id

    # Replay: the exact prompt, and whether today's render of the same head differs.
    replayed = await replay(ledger, after_one.call_id)
    assert [n.id for n in replayed.nodes] == list(replayed.call.read_ids)
    assert (replayed.system, list(replayed.messages)) == to_messages(replayed.nodes)
    assert replayed.differs is True  # its head now renders with the second summary
    assert replayed.added == (s2.id,)
    assert set(replayed.dropped) == {s1.id, before.user_node.id, before.reply.id}
    # The second summary also covers the turn after `before`'s head, so that head does
    # not hold the whole segment: it still renders verbatim, as when the call was made.
    unchanged = await replay(ledger, before.call_id)
    assert unchanged.differs is False and unchanged.current_ids == unchanged.call.read_ids
    assert (await replay(ledger, fork.call_id)).differs is False
    summarize = await replay(ledger, [r.call.id for r in by_summary
                                      if r.call.purpose is Purpose.SUMMARIZE][0])
    assert summarize.differs is None

    with pytest.raises(NotFound):
        await ledger.calls.get("cal_missing")
    assert await ledger.calls.get_many([before.call_id, "cal_missing"]) == [first]


async def test_calls_keep_their_reads_when_the_branch_they_read_is_deleted(ledger, turns):
    session = await ledger.sessions.create()
    kept = await turns.send_message(session.id, "Keep this.")
    doomed = await turns.edit(kept.user_node.id, "Delete this branch.")
    deleted = await ledger.head.delete_branch(session.id, doomed.reply.id)
    assert doomed.user_node.id in deleted.deleted_ids
    reads = await ledger.calls.reads(doomed.call_id)
    assert [n.id for n in reads] == [session.root_id, doomed.user_node.id]
    assert reads[1].deleted
    call = await ledger.calls.get(doomed.call_id)
    assert call.output_id == doomed.reply.id
    assert (await replay(ledger, doomed.call_id)).differs is None


async def test_reads_named_by_element_id_must_be_the_nodes_named_by_id(ledger):
    """A call made from a render names its reads by element id too, and those nodes are
    found directly. An element id that names another node (or none) never links the wrong
    node: the id decides, through the id index; an id of no node of the session is refused."""
    from dataclasses import replace

    from service.errors import BadInput
    from service.store import CallRecord
    from service.model.ids import utcnow

    session = await ledger.sessions.create("eid", "sys")
    await chat(ledger, session, *texts(4))
    other = await ledger.sessions.create("other", "sys")
    (foreign,) = await chat(ledger, other, "elsewhere")
    view = await ledger.views.render(session.id)
    assert all(n.element_id for n in view.nodes)
    now = utcnow()
    direct = CallRecord.of_prompt(Purpose.EXTERNAL, "external", "m", view.nodes, now, now)
    recorded = await ledger.calls.record(session.id, direct)
    assert recorded.read_ids == view.node_ids
    # Element ids shifted by one, and one of another session's node: the ids still decide.
    shifted = view.nodes[1:] + view.nodes[:1]
    wrong = replace(direct, id=f"{direct.id}x",
                    read_element_ids=tuple(n.element_id for n in shifted[:-1])
                    + (foreign.element_id,))
    recorded = await ledger.calls.record(session.id, wrong)
    assert [n.id for n in await ledger.calls.reads(recorded.id)] == list(view.node_ids)
    # A read id of another session is refused, even with that node's own element id.
    stray = replace(direct, id=f"{direct.id}y", read_ids=view.node_ids[:-1] + (foreign.id,),
                    read_element_ids=tuple(n.element_id for n in view.nodes[:-1])
                    + (foreign.element_id,))
    with pytest.raises(BadInput, match=foreign.id):
        await ledger.calls.record(session.id, stray)
    assert len(await session_calls(ledger, session.id)) == 2
