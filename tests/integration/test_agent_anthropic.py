"""The agent loop through the real Anthropic SDK against the local stub: tools offered,
a tool-using reply stored with its blocks (thinking and signature verbatim), results
answered, and every request the service sent is exactly `RenderedContext.request`'s body."""
from __future__ import annotations

from service.store import Role
from service.model.blocks import Thinking, ToolUse
from service.turns.requests import Options, Tool, anthropic_messages
from tests.provider_requests import assert_valid_anthropic
from tests.stubs.anthropic_stub import MESSAGES_PATH, reply, tool_call

WEATHER = Tool("weather", "Today's weather in a city.",
               {"type": "object", "properties": {"city": {"type": "string"}},
                "required": ["city"]})


def sent(stub) -> list[dict]:
    return [r.body for r in stub.requests if r.path == MESSAGES_PATH]


async def test_a_tool_round_trip_through_the_sdk_sends_the_request_clients_get(
        anthropic_runtime, stub):
    runtime = anthropic_runtime()
    turns, ledger = runtime.turns, runtime.ledger
    session = await ledger.sessions.create("agent", "You check the weather.")
    stub.enqueue(
        tool_call(("toolu_01", "weather", {"city": "Oslo"}),
                  ("toolu_02", "weather", {"city": "Lima"}),
                  text="Checking both.", thinking=("Two cities, two calls.", "c2lnLTE=")),
        reply("Oslo is cold, Lima is mild."))
    options = Options(tools=(WEATHER,))
    first = await turns.send_message(session.id, "Weather in Oslo and Lima?", options=options)
    assert first.error is None, first.error
    assert first.open_tool_use_ids == ["toolu_01", "toolu_02"]
    stored = await ledger.nodes.get(first.reply.id)
    assert stored.blocks[0] == Thinking("Two cities, two calls.", "c2lnLTE=")
    assert stored.blocks[2] == ToolUse("toolu_01", "weather", {"city": "Oslo"})
    assert stored.metadata["stop_reason"] == "tool_use"

    second = await turns.submit_tool_results(session.id, [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "-3 C"},
        {"type": "tool_result", "tool_use_id": "toolu_02", "content": "no data",
         "is_error": True}], options=options)
    assert second.error is None and second.open_tool_use_ids == []
    assert second.user_node.role is Role.TOOL
    assert second.reply.content == "Oslo is cold, Lima is mild."

    bodies = sent(stub)
    assert len(bodies) == 2
    for body in bodies:
        assert_valid_anthropic(body)
    assert bodies[0]["tools"][0]["name"] == "weather"
    thinking = bodies[1]["messages"][1]["content"][0]
    assert thinking == {"type": "thinking", "thinking": "Two cities, two calls.",
                        "signature": "c2lnLTE="}, "thinking goes back verbatim"
    results = bodies[1]["messages"][2]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_01", "toolu_02"]
    assert results[1]["is_error"] is True

    # What a client asking for this render's request gets is what the service sent.
    render = await ledger.views.render(session.id, second.user_node.id)
    settings = runtime.settings.anthropic
    assert anthropic_messages(render.nodes, {}, Options(
        model=settings.model, max_tokens=settings.max_tokens, tools=(WEATHER,))) == bodies[1]
    call = await ledger.calls.get(second.call_id)
    assert call.read_ids == render.node_ids
