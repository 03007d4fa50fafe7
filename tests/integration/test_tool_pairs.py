"""Content blocks on the real store, and the tool-pair rule as a ledger invariant: a write
that would separate a tool_use from its tool_result is refused, naming the ids, and writes
nothing."""
from __future__ import annotations

import base64

import pytest

from service.errors import BadInput
from service.store import Ledger, Limits, Role
from service.model.blocks import MediaRef, Text, ToolUse, media_hashes
from service.turns.requests import Options, Tool, anthropic_messages, openai_chat
from tests.integration.helpers import assert_sound, head_id
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai
from tests.unit.test_blocks import png


READ_FILE = Options(tools=(Tool("read_file", None, {"type": "object"}),))


def uses(*ids: str, text: str | None = None) -> list[dict]:
    lead = [{"type": "text", "text": text}] if text else []
    return lead + [{"type": "tool_use", "id": i, "name": "read_file",
                    "input": {"path": f"{i}.txt"}} for i in ids]


def answers(*ids: str, error: bool = False) -> list[dict]:
    return [{"type": "tool_result", "tool_use_id": i, "content": f"contents of {i}",
             "is_error": error} for i in ids]


async def agent_turn(ledger: Ledger, session_id: str, *ids: str):
    """user → assistant(tool uses) → tool(results) → assistant; returns the four nodes."""
    user = await ledger.head.append_message(session_id, "user", f"read {', '.join(ids)}")
    call = await ledger.head.append_message(session_id, "assistant", blocks=uses(*ids))
    result = await ledger.head.append_message(session_id, "tool", blocks=answers(*ids))
    reply = await ledger.head.append_message(session_id, "assistant", "Read them.")
    return user.node, call.node, result.node, reply.node


async def requests_of(ledger: Ledger, session_id: str, head: str | None = None):
    rendered = await ledger.views.render(session_id, head)
    hashes = [h for n in rendered.nodes for h in media_hashes(n.blocks)]
    media = await ledger.nodes.media(hashes)
    return (anthropic_messages(rendered.nodes, media, READ_FILE),
            openai_chat(rendered.nodes, media, READ_FILE))


async def test_a_tool_round_trip_is_stored_as_blocks_and_renders_as_valid_requests(ledger):
    session = await ledger.sessions.create("agent", "You use tools.")
    user, call, result, reply = await agent_turn(ledger, session.id, "toolu_a", "toolu_b")
    assert call.blocks[1] == ToolUse("toolu_b", "read_file", {"path": "toolu_b.txt"})
    assert call.content == ('[tool_use read_file {"path": "toolu_a.txt"}]\n\n'
                            '[tool_use read_file {"path": "toolu_b.txt"}]')
    assert result.role is Role.TOOL and result.content.startswith("[tool_result toolu_a]")
    assert reply.blocks == (Text("Read them."),) and reply.blocks_json is None
    stored = (await ledger.nodes.get(call.id))
    assert stored.blocks == call.blocks
    anthropic, openai = await requests_of(ledger, session.id)
    assert_valid_anthropic(anthropic)
    assert_valid_openai(openai)
    assert [b["type"] for b in anthropic["messages"][1]["content"]] == ["tool_use", "tool_use"]
    assert await head_id(ledger, session.id) == reply.id
    await assert_sound(ledger, session.id)


async def nothing_written(ledger: Ledger, session_id: str, before: int) -> None:
    assert (await ledger.sessions.get(session_id)).node_count == before


async def test_nothing_but_the_answers_may_follow_open_tool_uses(ledger):
    session = await ledger.sessions.create()
    await ledger.head.append_message(session.id, "user", "go")
    await ledger.head.append_message(session.id, "assistant", blocks=uses("t1", "t2"))
    before = (await ledger.sessions.get(session.id)).node_count
    for role, kwargs in (("user", {"content": "hello?"}),
                         ("assistant", {"content": "never mind"}),
                         ("tool", {"content": "plain output"}),
                         ("tool", {"blocks": answers("t1")})):
        with pytest.raises(BadInput) as refused:
            await ledger.head.append_message(session.id, role, **kwargs)
        assert "open tool uses (t2" in refused.value.message or \
               "open tool uses (t1, t2)" in refused.value.message, refused.value.message
        await nothing_written(ledger, session.id, before)
    with pytest.raises(BadInput, match=r"tool results answer t3, which the message they follow"):
        await ledger.head.append_message(session.id, "tool", blocks=answers("t1", "t2", "t3"))
    await nothing_written(ledger, session.id, before)
    await ledger.head.append_message(session.id, "tool", blocks=answers("t2", "t1", error=True))
    await ledger.head.append_message(session.id, "user", "thanks")
    await assert_sound(ledger, session.id)


async def test_a_result_answers_only_the_message_right_before_it(ledger):
    session = await ledger.sessions.create()
    _, call, result, _ = await agent_turn(ledger, session.id, "t1")
    with pytest.raises(BadInput, match="it opened none"):
        await ledger.head.append_message(session.id, "tool", blocks=answers("t1"))
    with pytest.raises(BadInput, match="tool results answer t1"):
        await ledger.head.append_message(session.id, "tool", blocks=answers("t1"),
                                         predecessor_id=result.id)
    await assert_sound(ledger, session.id)


async def test_a_tool_use_id_names_one_tool_use_in_its_session(ledger):
    session = await ledger.sessions.create()
    _, call, _, _ = await agent_turn(ledger, session.id, "dup")
    await ledger.head.append_message(session.id, "user", "again")
    with pytest.raises(BadInput, match="tool use ids already used in this session: dup"):
        await ledger.head.append_message(session.id, "assistant", blocks=uses("dup"))
    with pytest.raises(BadInput, match="already used in this session: dup"):
        await ledger.head.retry(call.id, blocks=uses("dup"))
    other = await ledger.sessions.create()
    await ledger.head.append_message(other.id, "user", "hi")
    await ledger.head.append_message(other.id, "assistant", blocks=uses("dup"))  # another session
    await assert_sound(ledger, session.id)


async def test_retry_of_a_tool_using_reply_and_edit_before_it_keep_every_tip_valid(ledger):
    session = await ledger.sessions.create()
    user, call, result, reply = await agent_turn(ledger, session.id, "r1")
    retried = await ledger.head.retry(call.id, blocks=uses("r2", text="Once more."))
    assert retried.head_moved and retried.node.blocks[0] == Text("Once more.")
    with pytest.raises(BadInput, match="open tool uses"):
        await ledger.head.append_message(session.id, "user", "skip it")
    await ledger.head.append_message(session.id, "tool", blocks=answers("r2"))
    edited = await ledger.head.edit(user.id, "read nothing")
    assert edited.head_moved
    for tip in (reply.id, (await ledger.sessions.get(session.id)).head_id):
        anthropic, openai = await requests_of(ledger, session.id, tip)
        assert_valid_anthropic(anthropic)
        assert_valid_openai(openai)
    await assert_sound(ledger, session.id)


async def test_media_is_stored_once_per_tenant_and_reaches_the_request(ledger, db, tenant):
    data = base64.b64encode(png(64, 32)).decode()
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": data}}
    first = await ledger.sessions.create()
    second = await ledger.sessions.create()
    a = await ledger.head.append_message(first.id, "user", blocks=[image, {
        "type": "text", "text": "What is it?"}])
    await ledger.head.append_message(second.id, "user", blocks=[image])
    source = a.node.blocks[0].source
    assert isinstance(source, MediaRef) and (source.width, source.height) == (64, 32)
    stored = await db.driver.execute_query(
        "MATCH (m:Media {tenant: $tenant}) RETURN count(m) AS media", tenant=tenant)
    assert stored.records[0]["media"] == 1, "the same image is stored once per tenant"
    assert await ledger.nodes.media([source.sha256]) == {source.sha256: data}
    by_hash = {"type": "image", "source": {"type": "media", "media_type": "image/png",
                                           "sha256": source.sha256, "bytes": source.bytes}}
    again = await ledger.head.append_message(first.id, "assistant", "A small picture.")
    await ledger.head.append_message(first.id, "user", blocks=[by_hash])
    with pytest.raises(BadInput, match="media named by hash is not stored"):
        await ledger.head.append_message(first.id, "user", blocks=[{
            "type": "image", "source": {**by_hash["source"], "sha256": "f" * 64}}])
    anthropic, openai = await requests_of(ledger, first.id)
    assert_valid_anthropic(anthropic)
    assert anthropic["messages"][0]["content"][0]["source"]["data"] == data
    assert_valid_openai(openai)
    assert again.node.id
    await assert_sound(ledger, first.id)
    await assert_sound(ledger, second.id)


async def test_another_tenant_cannot_name_media_it_never_stored(db, tenant):
    mine = Ledger.open(db, tenant, Limits())
    theirs = Ledger.open(db, tenant + "-other", Limits())
    data = base64.b64encode(png(4, 4)).decode()
    session = await mine.sessions.create()
    written = await mine.head.append_message(session.id, "user", blocks=[{
        "type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}])
    digest = written.node.blocks[0].source.sha256
    other = await theirs.sessions.create()
    with pytest.raises(BadInput, match="not stored"):
        await theirs.head.append_message(other.id, "user", blocks=[{"type": "image", "source": {
            "type": "media", "media_type": "image/png", "sha256": digest, "bytes": 10}}])
    assert await theirs.nodes.media([digest]) == {}


async def test_a_message_is_content_or_blocks(ledger):
    session = await ledger.sessions.create()
    with pytest.raises(BadInput, match="exactly one of them"):
        await ledger.head.append_message(session.id, "user", "x", blocks=[{"type": "text",
                                                                            "text": "x"}])
    with pytest.raises(BadInput, match="exactly one of them"):
        await ledger.head.append_message(session.id, "user")
    plain = await ledger.head.append_message(session.id, "user",
                                             blocks=[{"type": "text", "text": "just text"}])
    assert plain.node.blocks_json is None and plain.node.content == "just text"
