"""Recall in the turn loop (docs/guides/recall.md): the model asks history_expand or
history_search, the service answers within sendMessage, and the call that reads the
recalled turns records READ edges to them."""
import re

import pytest

from service.errors import BadInput
from service.model.blocks import ToolResult, ToolUse
from service.store import Role
from service.turns.providers import ModelReply, OfflineProvider
from service.turns.recall import RECALL_TOOLS
from service.turns.replay import replay
from service.turns.requests import Options, Tool, anthropic_messages
from service.turns.service import Turns
from service.turns import tool_sets
from tests.integration.helpers import KEEP_FOUR, assert_sound, chat, snapshot, turns
from tests.provider_requests import assert_valid_anthropic
from tests.stubs.anthropic_stub import MESSAGES_PATH, reply, tool_call

GREP = Tool("grep", "Searches files.", {"type": "object", "properties": {
    "q": {"type": "string"}}, "required": ["q"]})


class Scripted:
    """A model that answers by script: each step a function of the prompt giving a reply's
    blocks. It keeps what it was asked."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self, *steps):
        self.steps = list(steps)
        self.prompts = []

    async def complete(self, prompt):
        self.prompts.append(prompt)
        blocks = self.steps.pop(0)(prompt)
        uses = any(b["type"] == "tool_use" for b in blocks)
        return ModelReply("", self.model, 10, 10, {"provider": self.name}, blocks=blocks,
                          stop_reason="tool_use" if uses else "end_turn")


def expand_use(summary_id, cursor=None, use_id="toolu_x1"):
    given = {"summary_id": summary_id, **({"cursor": cursor} if cursor else {})}
    return {"type": "tool_use", "id": use_id, "name": "history_expand", "input": given}


def say(text):
    return lambda prompt: [{"type": "text", "text": text}]


def last_result_text(prompt) -> str:
    last = prompt.nodes[-1]
    return "\n".join(p.text for b in last.blocks if isinstance(b, ToolResult) for p in b.content)


async def compact(compactor, session_id):
    result = await compactor.compact(session_id, keep_recent_tokens=KEEP_FOUR)
    assert result.status.value == "COMPACTED", result.message
    return result.summary


async def compacted_session(ledger, compactor, strategy="rolling", recall=True, rounds=1):
    session = await ledger.sessions.create("recall", "sys", summary_strategy=strategy,
                                           recall=recall)
    t = await chat(ledger, session, "the vault code is walrus-42", "noted: walrus-42",
                   *turns(10))
    summary = None
    for i in range(rounds):
        summary = await compact(compactor, session.id)
        if i + 1 < rounds:
            t += await chat(ledger, session, *turns(8, start=20 + 8 * i))
    return session, t, summary


async def test_the_model_expands_a_summary_and_the_next_call_reads_the_recalled_turns(
        ledger, compactor):
    session, t, summary = await compacted_session(ledger, compactor)
    model = Scripted(lambda p: [{"type": "text", "text": "Let me look."}, expand_use(summary.id)],
                     say("The code was walrus-42."))
    result = await Turns(ledger, compactor, model).send_message(session.id, "What was the code?")
    assert result.error is None and result.reply.content == "The code was walrus-42."
    assert result.open_tool_use_ids == []
    # The summary stand-in told the model its id and the tool; the tools were offered.
    first = model.prompts[0]
    assert {t.name for t in first.options.tools} == {"history_search", "history_expand"}
    body = anthropic_messages(first.nodes, {}, first.options)
    assert summary.id in str(body["messages"][0]["content"]) and "history_expand" in str(body)
    # The covered turns came back verbatim, in chain order.
    text = last_result_text(model.prompts[1])
    covered = [n for n in t if n.id in summary.covers_ids]
    assert [m for m in re.findall(r'<turn id="([^"]+)"', text)] == [n.id for n in covered]
    for node in covered:
        assert f"\n{node.content}\n</turn>" in text
    # The recall is an ordinary tool pair in the ledger; the call after it reads the turns.
    use_node = await ledger.nodes.get(result.reply.predecessor_id)
    assert use_node.role is Role.TOOL and use_node.metadata["recalled_ids"] == [
        n.id for n in covered]
    asked = await ledger.nodes.get(use_node.predecessor_id)
    assert isinstance(asked.blocks[1], ToolUse) and asked.blocks[1].name == "history_expand"
    call = await ledger.calls.get(result.call_id)
    prompt_ids = [n.id for n in model.prompts[1].nodes]
    assert call.read_ids == (*prompt_ids, *(n.id for n in covered))
    assert call.recalled_reads == len(covered) and call.prompt_ids == tuple(prompt_ids)
    readers = await ledger.calls.reading(covered[0].id)
    assert result.call_id in {r.call.id for r in readers}
    # Replay rebuilds the prompt from the prompt's own reads; it matches today's render.
    replayed = await replay(ledger, result.call_id)
    assert [n.id for n in replayed.nodes] == prompt_ids and replayed.differs is False
    await assert_sound(ledger, session.id)
    # Every later call whose prompt holds that tool result reads the recalled turns too.
    later = await Turns(ledger, compactor, OfflineProvider()).send_message(session.id, "thanks")
    assert (await ledger.calls.get(later.call_id)).recalled_reads == len(covered)
    await assert_sound(ledger, session.id)


async def test_paging_follows_the_cursor_within_the_budget_and_keeps_tool_pairs_whole(
        ledger, compactor):
    session = await ledger.sessions.create("pages", "sys", recall=True)
    for i in range(5):
        await ledger.head.append_message(session.id, "user", f"question {i} " + "q" * 80)
        await ledger.head.append_message(session.id, "assistant", blocks=[
            {"type": "text", "text": f"checking {i}"},
            {"type": "tool_use", "id": f"toolu_g{i}", "name": "grep", "input": {"q": str(i)}}])
        await ledger.head.append_message(session.id, "tool", blocks=[
            {"type": "tool_result", "tool_use_id": f"toolu_g{i}", "content": f"found {i} " + "r" * 100}])
    await chat(ledger, session, *turns(4))
    summary = await compact(compactor, session.id)

    def next_page(prompt):
        found = re.search(r'cursor "([^"]+)"', last_result_text(prompt))
        if found is None:
            return [{"type": "text", "text": "read it all"}]
        return [expand_use(summary.id, found.group(1), use_id=f"toolu_p{len(model.prompts)}")]

    model = Scripted(lambda p: [expand_use(summary.id)], *[next_page] * 4)
    turn = Turns(ledger, compactor, model, recall_budget_tokens=120)
    result = await turn.send_message(session.id, "What did grep find?", options=Options(
        tools=(GREP,)))
    assert result.reply.content == "read it all" and len(model.prompts) > 2
    pages = [re.findall(r'<turn id="([^"]+)" role="([a-z]+)"', last_result_text(p))
             for p in model.prompts[1:]]
    assert [i for page in pages for i, _ in page] == list(summary.covers_ids)
    nodes = {n.id: n for n in await ledger.nodes.get_many(list(summary.covers_ids))}
    for page in pages:  # a page never ends on a tool use whose result is on the next
        last = nodes[page[-1][0]]
        assert not (last.role is Role.ASSISTANT and any(isinstance(b, ToolUse) for b in last.blocks))
        first = nodes[page[0][0]]
        assert first.role is not Role.TOOL
    await assert_sound(ledger, session.id)


@pytest.mark.parametrize("strategy", ["rolling", "branch", "segmented"])
async def test_recall_works_under_each_strategy_and_with_pins(ledger, compactor, strategy):
    session = await ledger.sessions.create("strategies", "sys", summary_strategy=strategy,
                                           recall=True)
    t = await chat(ledger, session, "the vault code is walrus-42", "noted: walrus-42",
                   *turns(10))
    await ledger.pins.set(t[2].id, 10_000)
    await compact(compactor, session.id)
    t += await chat(ledger, session, *turns(8, start=20))
    await compact(compactor, session.id)
    render = await ledger.views.render(session.id)
    assert render.stand_in_ids
    steps = [lambda p, s=s, i=i: [expand_use(s, use_id=f"toolu_s{i}")]
             for i, s in enumerate(render.stand_in_ids)]
    model = Scripted(*steps, say("done"))
    result = await Turns(ledger, compactor, model).send_message(session.id, "Recall it all.")
    assert result.reply.content == "done"
    summaries = await ledger.summaries.get_many(list(render.stand_in_ids))
    covered = [i for s in summaries for i in s.covers_ids]
    quoted = [i for p in model.prompts[1:]
              for i in re.findall(r'<turn id="([^"]+)"', last_result_text(p))]
    assert quoted == covered and t[0].id in quoted
    call = await ledger.calls.get(result.call_id)
    prompt = set(call.prompt_ids)
    assert t[2].id in prompt, "the pinned turn is in the prompt itself"
    assert set(call.read_ids) == prompt | set(covered)
    assert len(call.read_ids) == len(set(call.read_ids)), "a pinned recalled turn is read once"
    await assert_sound(ledger, session.id)


async def test_search_finds_covered_turns_and_names_their_summary(ledger, compactor):
    session, t, summary = await compacted_session(ledger, compactor)
    model = Scripted(lambda p: [{"type": "tool_use", "id": "toolu_q", "name": "history_search",
                                 "input": {"query": "walrus"}}], say("found"))
    result = await Turns(ledger, compactor, model).send_message(session.id, "the code?")
    text = last_result_text(model.prompts[1])
    assert t[0].id in text and t[1].id in text and summary.id in text
    call = await ledger.calls.get(result.call_id)
    assert set(call.read_ids[call.prompt_count:]) == {t[0].id, t[1].id}
    await assert_sound(ledger, session.id)


async def test_a_summary_the_head_does_not_show_is_an_error_result(ledger, compactor):
    session, t, summary = await compacted_session(ledger, compactor, rounds=2)
    assert summary.absorbed_id is not None
    model = Scripted(lambda p: [expand_use(summary.absorbed_id)], say("ok"))
    result = await Turns(ledger, compactor, model).send_message(session.id, "old one?")
    assert result.reply.content == "ok"
    answer = (await ledger.nodes.get(result.reply.predecessor_id)).blocks[0]
    assert answer.is_error and "not shown" in answer.content[0].text
    assert (await ledger.calls.get(result.call_id)).recalled_reads == 0
    await assert_sound(ledger, session.id)


async def test_mixed_replies_return_the_client_tools_open_and_answer_recall_with_them(
        ledger, compactor):
    session, t, summary = await compacted_session(ledger, compactor)
    model = Scripted(lambda p: [expand_use(summary.id), {
        "type": "tool_use", "id": "toolu_c", "name": "grep", "input": {"q": "x"}}],
        say("both answered"))
    turn = Turns(ledger, compactor, model)
    options = Options(tools=(GREP,))
    first = await turn.send_message(session.id, "grep and recall", options=options)
    assert first.open_tool_use_ids == ["toolu_c"]
    second = await turn.submit_tool_results(session.id, [
        {"type": "tool_result", "tool_use_id": "toolu_c", "content": "grep says hi"}],
        options=options)
    assert second.reply.content == "both answered"
    answered = [b.tool_use_id for b in second.user_node.blocks]
    assert answered == ["toolu_c", "toolu_x1"]
    assert (await ledger.calls.get(second.call_id)).recalled_reads == len(summary.covers_ids)
    await assert_sound(ledger, session.id)


async def test_rounds_are_bounded_and_the_runtime_may_go_on(ledger, compactor):
    session, t, summary = await compacted_session(ledger, compactor)
    model = Scripted(*[lambda p: [expand_use(summary.id, use_id=f"toolu_{len(model.prompts)}")]
                       for _ in range(6)], say("finally"))
    turn = Turns(ledger, compactor, model)
    result = await turn.send_message(session.id, "loop")
    assert len(model.prompts) == 5  # the first call and four rounds
    assert result.open_tool_use_ids == [f"toolu_5"]
    after = await turn.submit_tool_results(session.id, [])
    assert after.reply.content == "finally"
    await assert_sound(ledger, session.id)


async def test_a_disabled_session_offers_no_recall_tools_and_a_turn_may_enable_them(
        ledger, compactor):
    session, t, summary = await compacted_session(ledger, compactor, recall=False)
    model = Scripted(say("plain"), say("plain again"))
    turn = Turns(ledger, compactor, model)
    await turn.send_message(session.id, "history_search walrus")
    asked = model.prompts[0]
    assert asked.options.tools == () and not asked.options.recall
    assert summary.id not in str(anthropic_messages(asked.nodes, {}, asked.options))
    call = (await ledger.calls.get((await turn.send_message(
        session.id, "now with recall", options=Options(recall=True))).call_id))
    assert model.prompts[1].options.tools == RECALL_TOOLS
    assert (await ledger.calls.tool_sets([call.tools_sha256]))[call.tools_sha256][0][
        "name"] == "history_search"
    # The offline model, asked by name, calls history_search; the service answers it.
    updated = await ledger.sessions.update(session.id, recall=True)
    assert updated.recall is True
    offline = await Turns(ledger, compactor, OfflineProvider()).send_message(
        session.id, "Walrus history_search")
    assert "history_search" in offline.reply.content and offline.open_tool_use_ids == []
    await assert_sound(ledger, session.id)


async def test_a_client_tool_named_like_a_recall_tool_is_bad_input_and_writes_nothing(
        ledger, compactor):
    session, t, summary = await compacted_session(ledger, compactor)
    before = await snapshot(ledger, session.id)
    clash = Tool("history_expand", None, {"type": "object"})
    with pytest.raises(BadInput, match="recall tools"):
        await Turns(ledger, compactor, Scripted()).send_message(
            session.id, "hi", options=Options(tools=(clash,)))
    assert await snapshot(ledger, session.id) == before
    # With recall off for the turn, the client's tool of that name is its own.
    model = Scripted(say("fine"))
    await Turns(ledger, compactor, model).send_message(
        session.id, "hi", options=Options(tools=(clash,), recall=False))
    assert model.prompts[0].options.tools == (clash,)


async def test_a_session_tool_set_naming_a_recall_tool_is_checked_before_the_turn_writes(
        ledger, compactor):
    """A turn reads the session's tool set with its message's append; a set whose tools may
    clash with recall is read first, so a refused turn still leaves nothing behind."""
    session, t, summary = await compacted_session(ledger, compactor)
    await tool_sets.set_tools(ledger, session.id, [
        {"name": "history_expand", "input_schema": {"type": "object"}}])
    before = await snapshot(ledger, session.id)
    with pytest.raises(BadInput, match="recall tools"):
        await Turns(ledger, compactor, Scripted()).send_message(session.id, "hi")
    assert await snapshot(ledger, session.id) == before
    # An edit opens a turn the same way: its write reads the set, and writes nothing.
    head = await ledger.nodes.get((await ledger.sessions.get(session.id)).head_id)
    user = await ledger.nodes.get(head.predecessor_id)
    assert user.role is Role.USER
    with pytest.raises(BadInput, match="recall tools"):
        await Turns(ledger, compactor, Scripted()).edit(user.id, "hi instead")
    assert await snapshot(ledger, session.id) == before
    # Recall off for the session: the set is its own, and the turn goes through.
    quiet = await ledger.sessions.create("no recall", "sys", recall=False)
    await tool_sets.set_tools(ledger, quiet.id, [
        {"name": "history_expand", "input_schema": {"type": "object"}}])
    model = Scripted(say("fine"))
    result = await Turns(ledger, compactor, model).send_message(quiet.id, "hi")
    assert result.reply is not None
    assert [tool.name for tool in model.prompts[0].options.tools] == ["history_expand"]
    await assert_sound(ledger, quiet.id)


async def test_recall_through_the_anthropic_sdk(anthropic_runtime, stub, ledger, compactor):
    runtime = anthropic_runtime()
    session = await runtime.ledger.sessions.create("sdk", "sys", recall=True)
    t = await chat(runtime.ledger, session, "the vault code is walrus-42", "noted", *turns(10))
    summary = await compact(compactor, session.id)  # the offline summarizer, same tenant
    stub.enqueue(tool_call(("toolu_a1", "history_expand", {"summary_id": summary.id}),
                           text="Looking back."),
                 reply("walrus-42"))
    result = await runtime.turns.send_message(session.id, "What was the code?")
    assert result.error is None and result.reply.content == "walrus-42"
    bodies = [r.body for r in stub.requests if r.path == MESSAGES_PATH]
    assert len(bodies) == 2
    for body in bodies:
        assert_valid_anthropic(body)
    assert [t["name"] for t in bodies[0]["tools"]] == ["history_search", "history_expand"]
    stand_in = bodies[0]["messages"][0]["content"]
    stand_in = stand_in if isinstance(stand_in, str) else stand_in[0]["text"]
    assert summary.id in stand_in and "history_expand" in stand_in
    result_block = bodies[1]["messages"][-1]["content"][0]
    assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == "toolu_a1"
    quoted = result_block["content"][0]["text"]
    assert "the vault code is walrus-42" in quoted
    call = await runtime.ledger.calls.get(result.call_id)
    assert call.read_ids[call.prompt_count:] == summary.covers_ids
    await assert_sound(runtime.ledger, session.id)
