"""Turns: who moves HEAD, what each model call read, spawned tasks, external calls."""
import asyncio

import pytest

from service.context.budget import BudgetPolicy
from service.errors import BadInput, ContextOverflow, ModelUnavailable
from service.store import Purpose, Role
from service.turns.providers import OfflineProvider
from service.turns.service import Turns
from tests.integration.helpers import make_compactor, KEEP_FOUR, assert_sound, chat, head_id, rendered, session_calls, turns as texts


class ScriptedProvider(OfflineProvider):
    """The offline model, with scripted failures and an optional gate to hold a call open."""

    name = "scripted"

    def __init__(self, *failures: Exception, gate: asyncio.Event | None = None) -> None:
        self.failures = list(failures)
        self.gate = gate
        self.called = asyncio.Event()  # set once a call (its prompt written) is in flight
        self.prompts = []

    async def complete(self, prompt):
        self.prompts.append([n.id for n in prompt.nodes])
        self.called.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.failures:
            raise self.failures.pop(0)
        return await super().complete(prompt)


async def test_send_message_appends_both_turns_and_records_what_the_model_read(ledger, turns):
    session = await ledger.sessions.create("t", "You are terse.")
    result = await turns.send_message(session.id, "Hello there. How are you?")
    user, reply = result.user_node, result.reply
    assert user.predecessor_id == session.root_id and reply.predecessor_id == user.id
    assert await head_id(ledger, session.id) == reply.id
    assert reply.metadata["offline"] is True and reply.metadata["provider"] == "offline"
    assert "[offline model]" in reply.content and "Hello there." in reply.content
    call = await ledger.calls.get(result.call_id)
    assert call.purpose is Purpose.CHAT and call.provider == "offline"
    assert call.read_ids == (session.root_id, user.id)
    assert call.output_id == reply.id and call.head_id == user.id
    assert [n.id for n in await ledger.calls.reads(call.id)] == [session.root_id, user.id]
    await assert_sound(ledger, session.id)


async def test_a_turn_renders_once_and_then_extends_its_last_render(ledger, turns):
    """The first turn appends the message, renders (budget check and prompt alike), and
    writes the reply with its call. The next turn extends that render by the new message:
    one statement before the model answers, one after."""
    session = await ledger.sessions.create("trips", "sys")

    async def turn(text: str) -> dict[str, int]:
        before = dict(ledger.db.round_trips.by_name)
        result = await turns.send_message(session.id, text)
        sent = {name: count - before.get(name, 0)
                for name, count in ledger.db.round_trips.by_name.items()
                if count != before.get(name, 0)}
        assert result.reply is not None
        # The prompt is exactly what a full render of its head gives, and what the call read.
        call = await ledger.calls.get(result.call_id)
        assert list(call.read_ids) == await rendered(ledger, session.id, result.user_node.id)
        return sent

    # (the message's append reads the session's tool set in force too: docs/guides/tool-sets.md)
    assert await turn("first") == {"append_message": 2, "render_context": 1}
    assert await turn("second") == {"append_message": 2}
    assert await turn("third") == {"append_message": 2}


async def test_reads_are_the_rendered_prompt_with_the_summary_stand_in(ledger, compactor, turns):
    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *texts(8))
    summary = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    provider = ScriptedProvider()
    result = await Turns(ledger, compactor, provider).send_message(session.id, "Next question.")
    call = await ledger.calls.get(result.call_id)
    expected = (session.root_id, summary.id, *[n.id for n in nodes[4:]], result.user_node.id)
    assert call.read_ids == expected == tuple(provider.prompts[0])


async def test_the_summarizer_call_is_recorded_with_its_reads(ledger, compactor):
    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *texts(8))
    first = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    await chat(ledger, session, *texts(4, start=8))
    second = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    calls = [c for c in await session_calls(ledger, session.id)
             if c.purpose is Purpose.SUMMARIZE]
    assert [c.output_id for c in calls] == [first.id, second.id]
    full = await ledger.calls.get_many([c.id for c in calls])
    assert full[0].read_ids == tuple(n.id for n in nodes[:4])
    # The relayed summary entered the second prompt first, then the newly covered turns.
    assert full[1].read_ids == (first.id, *[n.id for n in nodes[4:8]])
    assert all(c.provider == "offline-extractive" for c in full)


async def test_retry_forks_the_reply_moves_head_and_reads_the_same_prompt(ledger, turns):
    session = await ledger.sessions.create()
    first = await turns.send_message(session.id, "Pick a number.")
    again = await turns.retry(first.reply.id)
    assert again.reply.fork_of == first.reply.id
    assert again.reply.predecessor_id == first.user_node.id
    assert await head_id(ledger, session.id) == again.reply.id
    calls = await ledger.calls.get_many([first.call_id, again.call_id])
    assert calls[0].read_ids == calls[1].read_ids
    assert {b.tip.id for b in await ledger.branches.list(session.id)} == {
        first.reply.id, again.reply.id}
    with pytest.raises(BadInput):
        await turns.retry(first.user_node.id)


async def test_edit_forks_the_user_message_and_answers_it(ledger, turns):
    session = await ledger.sessions.create()
    first = await turns.send_message(session.id, "Tell me about cats.")
    await turns.send_message(session.id, "More please.")
    edited = await turns.edit(first.user_node.id, "Tell me about dogs.")
    assert edited.user_node.fork_of == first.user_node.id
    assert edited.user_node.predecessor_id == session.root_id
    assert edited.reply.predecessor_id == edited.user_node.id
    assert await head_id(ledger, session.id) == edited.reply.id
    call = await ledger.calls.get(edited.call_id)
    assert call.read_ids == (session.root_id, edited.user_node.id)


async def test_a_provider_error_keeps_the_user_turn_and_records_the_failed_call(ledger, compactor):
    provider = ScriptedProvider(ModelUnavailable("Anthropic is overloaded (HTTP 529)"))
    session = await ledger.sessions.create()
    result = await Turns(ledger, compactor, provider).send_message(session.id, "Hi.")
    assert result.reply is None and result.error.code == "MODEL_UNAVAILABLE"
    assert await head_id(ledger, session.id) == result.user_node.id
    call = await ledger.calls.get(result.call_id)
    assert call.error_code == "MODEL_UNAVAILABLE" and call.output_id is None
    assert call.read_ids == (session.root_id, result.user_node.id)
    await assert_sound(ledger, session.id)


async def test_overflow_compacts_passively_retries_once_and_records_both_calls(ledger, events):
    compactor = make_compactor(ledger, policy=BudgetPolicy(keep_recent_tokens=KEEP_FOUR))
    provider = ScriptedProvider(ContextOverflow("prompt is too long: 208656 tokens > 200000"))
    session = await ledger.sessions.create()
    await chat(ledger, session, *texts(8))
    result = await Turns(ledger, compactor, provider).send_message(session.id, "Question 008.")
    assert result.reply is not None
    assert result.compaction.trigger == "passive"
    summary_id = result.compaction.summary.id
    chats = [c for c in await session_calls(ledger, session.id) if c.purpose is Purpose.CHAT]
    failed, answered = await ledger.calls.get_many([c.id for c in chats])
    assert failed.error_code == "CONTEXT_OVERFLOW" and failed.output_id is None
    assert summary_id not in failed.read_ids and summary_id in answered.read_ids
    assert answered.output_id == result.reply.id
    assert await head_id(ledger, session.id) == result.reply.id


async def test_a_second_overflow_is_a_clear_error_and_the_user_turn_stays(ledger, events):
    compactor = make_compactor(ledger, policy=BudgetPolicy(keep_recent_tokens=KEEP_FOUR))
    overflow = ContextOverflow("prompt is too long: 208656 tokens > 200000")
    provider = ScriptedProvider(overflow, overflow)
    session = await ledger.sessions.create()
    await chat(ledger, session, *texts(8))
    result = await Turns(ledger, compactor, provider).send_message(session.id, "Question 008.")
    assert result.reply is None and result.error.code == "CONTEXT_OVERFLOW"
    assert "after compaction" in result.error.message
    assert await head_id(ledger, session.id) == result.user_node.id
    await assert_sound(ledger, session.id)


async def test_auto_compaction_runs_before_a_turn_at_eighty_percent(ledger, events):
    policy = BudgetPolicy(context_window=260, keep_recent_tokens=KEEP_FOUR)
    compactor = make_compactor(ledger, policy=policy)
    session = await ledger.sessions.create(system_prompt="sys")
    await chat(ledger, session, *texts(8))
    result = await Turns(ledger, compactor, OfflineProvider()).send_message(
        session.id, "Question 008. ".ljust(100, "x"))
    assert result.compaction.trigger == "auto"
    call = await ledger.calls.get(result.call_id)
    assert result.compaction.summary.id in call.read_ids


async def test_spawned_tasks_never_move_head_while_the_user_keeps_chatting(ledger, compactor):
    session = await ledger.sessions.create()
    first = await Turns(ledger, compactor, OfflineProvider()).send_message(session.id, "Go.")
    gate = asyncio.Event()
    task_model = ScriptedProvider(gate=gate)
    task_turns = Turns(ledger, compactor, task_model)
    user_turns = Turns(ledger, compactor, OfflineProvider())
    task = asyncio.create_task(
        task_turns.spawn_task(session.id, first.reply.id, "Research this in the background."))
    await task_model.called.wait()  # the task's branch root is written; its call is held open
    heads = []
    for i in range(3):
        chatted = await user_turns.send_message(session.id, f"Meanwhile, message {i}.")
        heads.append(await head_id(ledger, session.id))
        assert heads[-1] == chatted.reply.id
    gate.set()
    result = await task
    assert await head_id(ledger, session.id) == heads[-1]
    root, reply = result.user_node, result.reply
    assert root.predecessor_id == first.reply.id and root.caller_id == first.reply.id
    assert reply.caller_id == first.reply.id and reply.side_branch and root.side_branch
    call = await ledger.calls.get(result.call_id)
    assert call.purpose is Purpose.TASK
    assert call.read_ids == (session.root_id, first.user_node.id, first.reply.id, root.id)
    tips = {b.tip.id for b in await ledger.branches.list(session.id)}
    assert reply.id not in tips and root.id not in tips
    await assert_sound(ledger, session.id)


async def test_a_failing_spawned_task_leaves_head_alone(ledger, compactor):
    session = await ledger.sessions.create()
    first = await Turns(ledger, compactor, OfflineProvider()).send_message(session.id, "Go.")
    failing = Turns(ledger, compactor, ScriptedProvider(ModelUnavailable("down")))
    result = await failing.spawn_task(session.id, first.reply.id, "Do the thing.")
    assert result.reply is None and result.error.code == "MODEL_UNAVAILABLE"
    assert await head_id(ledger, session.id) == first.reply.id
    assert (await ledger.calls.get(result.call_id)).error_code == "MODEL_UNAVAILABLE"


async def test_delivery_into_another_session_advances_that_session_head(ledger, turns):
    session = await ledger.sessions.create("orchestrator")
    other = await ledger.sessions.create("worker inbox")
    first = await turns.send_message(session.id, "Delegate.")
    result = await turns.spawn_task(session.id, first.reply.id, "Report back.",
                                    deliver_to=other.id)
    assert await head_id(ledger, session.id) == first.reply.id
    inbox = await rendered(ledger, other.id)
    delivered = await ledger.nodes.get(inbox[1])
    assert delivered.role is Role.USER and delivered.content == result.reply.content
    assert len(inbox) == 3  # ROOT, the delivered message, the worker's reply


async def test_record_call_validates_reads_and_writes_nothing_on_error(ledger, turns, db):
    from service.store import Ledger, Limits
    from tests.integration.helpers import snapshot

    session = await ledger.sessions.create()
    u, a = await chat(ledger, session, "Q. ".ljust(20, "x"), "A. ".ljust(20, "x"))
    other = await ledger.sessions.create()
    (foreign_session_node,) = await chat(ledger, other, "elsewhere")
    stranger = Ledger.open(db, ledger.tenant + "-x", Limits())
    foreign = await stranger.sessions.create()
    before = await snapshot(ledger, session.id)
    for bad in (["nod_unknown"], [foreign_session_node.id], [foreign.root_id], [u.id, "nope"]):
        with pytest.raises(BadInput, match="not nodes of session"):
            await turns.record_call(session.id, [session.root_id, *bad], "their-model")
    for bad_usage in ({"input_tokens": -1}, {"prompt": 3}, "lots"):
        with pytest.raises(BadInput):
            await turns.record_call(session.id, [u.id], "m", usage=bad_usage)
    with pytest.raises(BadInput):
        await turns.record_call(session.id, [], "m")
    assert await snapshot(ledger, session.id) == before
    assert await session_calls(ledger, session.id) == []

    call = await turns.record_call(session.id, [session.root_id, u.id, a.id], "their-model",
                                   usage={"input_tokens": 12, "output_tokens": 3})
    assert call.purpose is Purpose.EXTERNAL and call.output_id is None
    assert call.read_ids == (session.root_id, u.id, a.id) and call.input_tokens == 12
    with_output = await turns.record_call(session.id, [session.root_id, u.id, a.id], "m",
                                          output="An external reply.")
    produced = await ledger.nodes.get(with_output.output_id)
    assert produced.predecessor_id == a.id and produced.content == "An external reply."
    assert await head_id(ledger, session.id) == produced.id


async def test_concurrent_turns_on_one_session_lose_nothing(ledger, turns):
    session = await ledger.sessions.create()
    results = await asyncio.gather(*(turns.send_message(session.id, f"Message {i}.")
                                     for i in range(10)))
    assert all(r.reply is not None for r in results)
    calls = await session_calls(ledger, session.id)
    assert len(calls) == 10
    assert (await ledger.sessions.get(session.id)).node_count == 21
    await assert_sound(ledger, session.id)


async def test_recording_a_call_is_one_round_trip_whatever_its_reads(ledger):
    from service.store import CallRecord
    from service.model.ids import utcnow

    session = await ledger.sessions.create()
    nodes = await chat(ledger, session, *[f"turn {i}" for i in range(30)])
    reads = (session.root_id, *[n.id for n in nodes])
    before = ledger.db.round_trips.total
    call = await ledger.calls.record(session.id, CallRecord(
        Purpose.EXTERNAL, "external", "m", reads, utcnow(), utcnow()))
    assert ledger.db.round_trips.total - before == 1
    assert (await ledger.calls.get(call.id)) == call


def tool(name):
    return {"name": name, "description": f"{name} a thing",
            "input_schema": {"type": "object", "properties": {}}}


def digest(*tools):
    import hashlib
    from service.model.models import tools_json
    from service.turns import requests
    return hashlib.sha256(tools_json(requests.tool_definitions(tools)).encode()).hexdigest()


async def test_a_spawned_task_is_offered_the_tool_set_in_force_where_it_hangs(ledger, compactor):
    """Read by the append that writes the task's root (no round trip of its own): the
    session's set, or a newer one anchored on the chain the task hangs from, not one
    anchored on a turn below its start."""
    from service.turns import tool_sets

    session = await ledger.sessions.create()
    turns = Turns(ledger, compactor, OfflineProvider())
    first = await turns.send_message(session.id, "Go.")
    await tool_sets.set_tools(ledger, session.id, [tool("grep")])
    later = await turns.send_message(session.id, "And then?")
    await tool_sets.set_tools(ledger, session.id, [tool("sed")], head_id=later.reply.id)
    before = ledger.db.round_trips.by_name.get("tool_set_in_force", 0)
    early = await turns.spawn_task(session.id, first.reply.id, "Look back.")
    below = await turns.spawn_task(session.id, later.reply.id, "Look further.")
    assert ledger.db.round_trips.by_name.get("tool_set_in_force", 0) == before
    assert (await ledger.calls.get(early.call_id)).tools_sha256 == digest(tool("grep"))
    assert (await ledger.calls.get(below.call_id)).tools_sha256 == digest(tool("sed"))
    await assert_sound(ledger, session.id)


async def test_an_edit_is_offered_the_tool_set_in_force_above_it_read_by_its_own_write(
        ledger, compactor):
    """An edit opens a turn: the statement that writes the edited message reads the set
    its call is offered, at the message's predecessor (no round trip of its own)."""
    from service.turns import tool_sets

    session = await ledger.sessions.create()
    turns = Turns(ledger, compactor, OfflineProvider())
    first = await turns.send_message(session.id, "Go.")
    await tool_sets.set_tools(ledger, session.id, [tool("grep")])
    second = await turns.send_message(session.id, "And then?")
    await tool_sets.set_tools(ledger, session.id, [tool("sed")], head_id=second.reply.id)
    third = await turns.send_message(session.id, "Now?")
    before = ledger.db.round_trips.by_name.get("tool_set_in_force", 0)
    above = await turns.edit(second.user_node.id, "And then, really?")
    below = await turns.edit(third.user_node.id, "Now, really?")
    assert ledger.db.round_trips.by_name.get("tool_set_in_force", 0) == before
    assert (await ledger.calls.get(above.call_id)).tools_sha256 == digest(tool("grep"))
    assert (await ledger.calls.get(below.call_id)).tools_sha256 == digest(tool("sed"))
    assert await head_id(ledger, session.id) == below.reply.id
    assert first.reply.id != above.reply.id
    await assert_sound(ledger, session.id)
