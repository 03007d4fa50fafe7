"""Compaction through the real anthropic SDK, against a local stub of the Messages API."""
import pytest

from service.context.compaction import CompactionStatus
from tests.integration.helpers import (
    KEEP_FOUR, chat, head_id, snapshot, stored_events, turns, without_event_counters,
)
from tests.stubs.anthropic_stub import message_text, overloaded, prompt_too_long, reply


@pytest.fixture
def runtime(anthropic_runtime):
    return anthropic_runtime(CTXDAG_ANTHROPIC_MAX_RETRIES="1",
                             CTXDAG_ANTHROPIC_CONTEXT_WINDOW="1000")


def message_requests(stub):
    return [r for r in stub.requests if r.path == "/v1/messages"]


def instruction(request) -> str:
    """The summary instruction: the text appended after the conversation's own messages."""
    return request.body["messages"][-1]["content"][-1]["text"]


def conversation_text(request) -> str:
    """Every text of the request but the instruction: the conversation's own messages."""
    *before, last = request.body["messages"]
    return "\n".join(message_text({"messages": [*before, {**last,
                                                         "content": last["content"][:-1]}]}))


async def test_anthropic_is_chosen_when_a_key_is_set_and_writes_the_summary(runtime, stub):
    assert runtime.summarizer.name == "anthropic"
    assert runtime.policy.context_window == 1000
    ledger = runtime.ledger
    session = await ledger.sessions.create("anthropic", "sys")
    nodes = await chat(ledger, session, *turns(8))
    stub.enqueue(reply("The user asked four questions; all were answered.", 321, 12))
    result = await runtime.compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
    assert result.status is CompactionStatus.COMPACTED
    summary = result.summary
    assert summary.content == "The user asked four questions; all were answered."
    assert summary.node.metadata["summarizer"] == "anthropic"
    assert summary.node.metadata["model"] == "claude-stub"
    assert summary.node.metadata["input_tokens"] == 321
    (request,) = message_requests(stub)
    # The summarizer sends the conversation's own request (docs/concepts/provenance.md) and
    # names where the retained tail begins, which it leaves out.
    for turn in nodes:
        assert turn.content in conversation_text(request)
    assert f"up to the message that begins \u201c{nodes[4].content}\u201d" in instruction(request)

    # The second compaction relays the first summary to the model.
    await chat(ledger, session, *turns(4, start=8))
    stub.enqueue(reply("Eight questions, all answered."))
    second = await runtime.compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
    assert second.summary.covers_ids == tuple(n.id for n in nodes)
    relayed = message_requests(stub)[-1]
    assert summary.content in conversation_text(relayed)
    assert "opening summary of still earlier turns included" in instruction(relayed)
    assert await ledger.violations(session.id) == []


async def test_an_overloaded_summarizer_fails_cleanly(runtime, stub):
    ledger = runtime.ledger
    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *turns(8))
    before = await snapshot(ledger, session.id)
    stub.enqueue(overloaded(), overloaded())
    mark = (await ledger.events.bounds(session.id)).last_seq
    result = await runtime.compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
    assert result.status is CompactionStatus.FAILED
    assert result.error_code == "MODEL_UNAVAILABLE"
    assert len(message_requests(stub)) == 2  # the SDK retried once, as configured
    started, failed = await stored_events(ledger, session.id, mark)
    assert started.type == "compaction_started"
    assert failed.type == "compaction_failed" and "529" in failed.reason
    assert without_event_counters(await snapshot(ledger, session.id)) == \
        without_event_counters(before)
    assert await head_id(ledger, session.id) == nodes[-1].id


async def test_a_summarizer_overflow_is_a_failed_compaction_not_a_crash(runtime, stub):
    ledger = runtime.ledger
    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(8))
    before = await snapshot(ledger, session.id)
    stub.enqueue(prompt_too_long())
    result = await runtime.compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
    assert result.status is CompactionStatus.FAILED
    assert result.error_code == "CONTEXT_OVERFLOW"
    assert "too long" in result.message
    assert without_event_counters(await snapshot(ledger, session.id)) == \
        without_event_counters(before)


async def test_auto_trigger_counts_tokens_with_the_provider(runtime, stub):
    ledger = runtime.ledger
    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(8))
    stub.enqueue_count_tokens(700)  # under 80 % of 1000
    assert await runtime.compactor.compact_if_over_budget(session.id) is None
    stub.enqueue_count_tokens(800)
    stub.enqueue(reply("Summary."))
    result = await runtime.compactor.compact_if_over_budget(session.id)
    assert result.status is CompactionStatus.COMPACTED and result.trigger == "auto"
    counted = [r for r in stub.requests if r.path == "/v1/messages/count_tokens"]
    assert len(counted) == 2 and counted[0].body["model"] == "claude-stub"


FOCUS = "Focus on the database migration; the CSS questions do not matter."


async def test_focus_instructions_reach_the_model_and_are_stored(runtime, stub):
    from service.llm.prompts import SUMMARY_SECTIONS

    ledger = runtime.ledger
    session = await ledger.sessions.create("focus", "sys")
    await chat(ledger, session, *turns(8))
    stub.enqueue(reply("## Goal\n- migrate the database"))
    result = await runtime.compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR,
                                             instructions=FOCUS)
    assert result.status is CompactionStatus.COMPACTED
    (request,) = message_requests(stub)
    prompt = instruction(request)
    assert f"<focus_instructions>\n{FOCUS}\n</focus_instructions>" in prompt
    for section in SUMMARY_SECTIONS:  # the structured summary the model is asked for
        assert f"## {section}\n" in prompt
    for name in ("Goal", "Decisions", "Constraints", "Progress", "Open tasks",
                 "Files and artifacts", "Next step"):
        assert name in SUMMARY_SECTIONS
    assert result.summary.instructions == FOCUS
    assert (await ledger.summaries.get(result.summary.id)).instructions == FOCUS

    # A later compaction without instructions relays the summary, asks for no focus and
    # stores none.
    await chat(ledger, session, *turns(4, start=8))
    stub.enqueue(reply("## Goal\n- migrate the database, still"))
    second = await runtime.compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
    relayed = instruction(message_requests(stub)[-1])
    assert "## Goal\n- migrate the database" in conversation_text(message_requests(stub)[-1])
    assert "focus_instructions" not in relayed and FOCUS not in relayed
    assert second.summary.instructions is None
    assert await ledger.violations(session.id) == []


async def test_auto_compaction_has_no_instructions(runtime, stub):
    ledger = runtime.ledger
    session = await ledger.sessions.create()
    await chat(ledger, session, *turns(8))
    stub.enqueue_count_tokens(800)
    stub.enqueue(reply("Summary."))
    result = await runtime.compactor.compact_if_over_budget(session.id)
    assert result.status is CompactionStatus.COMPACTED and result.summary.instructions is None
    prompt = instruction(message_requests(stub)[-1])
    assert "focus_instructions" not in prompt
