"""Redaction on the store (docs/guides/redaction.md): what a redacted node holds, what stays,
the media it erases, and how every reader of the ledger takes it."""
import json

import pytest

from service.context.render import render_context
from service.errors import BadInput, Conflict, NotFound
from service.model.redaction import MARKER
from service.store import Ledger, Limits
from service.store.backup import export_session, import_session
from service.turns.replay import replay
from service.model.blocks import media_hashes
from service.turns.requests import Options, anthropic_messages, openai_chat
from tests.integration.helpers import (
    agent_session, assert_sound, broken_sessions, chat, run_cypher, stored_events,
)
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai

MEDIA = "MATCH (m:Media {tenant: $tenant}) RETURN m.sha256 AS sha256, m.data IS NOT NULL AS data"


async def _media(db, tenant):
    return {r["sha256"]: r["data"] for r in await run_cypher(db, MEDIA, tenant=tenant)}


async def test_a_redacted_message_keeps_its_structure_and_nothing_of_what_it_said(
        ledger, compactor):
    session, ids = await agent_session(ledger, compactor)
    before = await ledger.nodes.get(ids["call"])
    done = await ledger.redactions.redact(ids["call"], "pasted a credential")
    node = done.node
    assert node.redaction.reason == "pasted a credential" and node.redaction.at
    assert [b.kind for b in node.blocks] == ["text", "tool_use", "tool_use"]
    assert node.blocks[0].text == MARKER
    assert [(b.id, b.name, b.input) for b in node.blocks[1:]] == [
        ("toolu_a", "read_file", {}), ("toolu_b", "read_file", {})]
    assert "Reading both" not in node.content and "Two files" not in json.dumps(
        await run_cypher(ledger.db, "MATCH (n:Node {id: $id}) RETURN properties(n) AS p",
                         id=node.id), default=str)
    assert (node.id, node.role, node.predecessor_id, node.seq) == (
        before.id, before.role, before.predecessor_id, before.seq)
    results = (await ledger.redactions.redact(ids["results"], "its output too")).node
    assert [(b.tool_use_id, b.is_error, b.content[0].text) for b in results.blocks] == [
        ("toolu_a", False, MARKER), ("toolu_b", True, MARKER)]
    await assert_sound(ledger, session.id)
    assert await broken_sessions(ledger.db, Limits(), ledger.tenant) == {}
    render = await render_context(ledger, session.id, ids["results"])
    assert ids["call"] in render.node_ids
    media = await ledger.nodes.media([h for n in render.nodes for h in media_hashes(n.blocks)])
    shaped = Options(model="claude-x", max_tokens=100)
    anthropic, openai = (anthropic_messages(render.nodes, media, shaped),
                         openai_chat(render.nodes, media, shaped))
    for body in (anthropic, openai):
        text = json.dumps(body)
        assert "Two files" not in text and "contents of toolu_a" not in text
        assert MARKER in text
    assert_valid_anthropic(anthropic)
    assert_valid_openai(openai)


async def test_media_are_erased_only_when_no_other_node_carries_them(ledger, compactor, db,
                                                                     tenant):
    session, ids = await agent_session(ledger, compactor)
    ask, again = await ledger.nodes.get_many([ids["ask"], ids["again"]])
    image, pdf = again.blocks[0].source, again.blocks[1].source
    assert ask.blocks[1].source.sha256 == image.sha256
    done = await ledger.redactions.redact(again.id, "a scan of a passport")
    assert done.erased_media == (pdf.sha256,)  # the picture is still the question's
    assert {m.sha256: m.bytes for m in done.node.redaction.media} == {
        image.sha256: image.bytes, pdf.sha256: pdf.bytes}
    assert await _media(db, tenant) == {image.sha256: True}
    assert (await ledger.redactions.redact(ask.id, "the same scan")).erased_media == (
        image.sha256,)
    assert await _media(db, tenant) == {}
    await assert_sound(ledger, session.id)
    assert await broken_sessions(db, Limits(), tenant) == {}


async def test_bad_reasons_unknown_nodes_and_a_second_redaction_write_nothing(ledger):
    session = await ledger.sessions.create("s", "sys")
    user, = await chat(ledger, session, "my password is hunter2")
    for reason in ("", "   ", None):
        with pytest.raises(BadInput):
            await ledger.redactions.redact(user.id, reason)
    with pytest.raises(NotFound):
        await ledger.redactions.redact("nod_nothing", "why")
    assert (await ledger.nodes.get(user.id)).content == "my password is hunter2"
    await ledger.redactions.redact(user.id, "a password")
    events = await stored_events(ledger, session.id)
    with pytest.raises(Conflict):
        await ledger.redactions.redact(user.id, "again")
    assert await stored_events(ledger, session.id) == events
    assert (await ledger.nodes.get(user.id)).redaction.reason == "a password"


async def test_summaries_covering_a_redacted_node_are_named_as_possibly_quoting_it(
        ledger, compactor):
    session, ids = await agent_session(ledger, compactor)
    summary = await ledger.summaries.get(ids["summary"])
    covered = summary.covers_ids[1]
    done = await ledger.redactions.redact(covered, "secret in an early turn")
    assert done.quoting_ids == (summary.id,)
    assert await ledger.redactions.quoting_many([covered, ids["ask"]]) == {
        covered: [summary.id], ids["ask"]: []}
    assert (await ledger.redactions.quoted_many([summary.id]))[summary.id] == [covered]
    await ledger.redactions.redact(summary.id, "it quoted the secret")
    assert await ledger.redactions.quoting_many([covered]) == {covered: []}
    assert (await ledger.summaries.get(summary.id)).content == MARKER
    await assert_sound(ledger, session.id)


async def test_export_import_and_replay_know_redactions(ledger, compactor, db, tenant):
    session, ids = await agent_session(ledger, compactor)
    await ledger.redactions.redact(ids["again"], "a scan of a passport")
    document = await export_session(db, tenant, session.id, Limits())
    assert "Compare the picture" not in json.dumps(document)
    other = f"{tenant}-copy"
    await run_cypher(db, "MATCH (n {session_id: $sid}) DETACH DELETE n", sid=session.id)
    await run_cypher(db, "MATCH (s:Session {id: $sid}) DETACH DELETE s", sid=session.id)
    assert await import_session(db, other, document, Limits()) == session.id
    copy = Ledger.open(db, other, Limits())
    node = await copy.nodes.get(ids["again"])
    assert node.content == MARKER and node.redaction.reason == "a scan of a passport"
    assert len(node.redaction.media) == 2
    assert await broken_sessions(db, Limits(), other) == {}
    tampered = json.loads(json.dumps(document))
    for n in tampered["nodes"]:
        if n["properties"]["id"] == ids["again"]:
            n["properties"]["content"] = "Compare the picture with the spec."
    with pytest.raises(BadInput):
        await import_session(db, f"{tenant}-tampered", tampered, Limits())


async def test_ctxdag_redact_warns_without_yes_and_redacts_with_it(db, tenant, capsys):
    from tests.integration.helpers import run_command, runtime_for

    runtime = runtime_for(db, tenant)
    session = await runtime.ledger.sessions.create("s", "sys")
    user, = await chat(runtime.ledger, session, "token ghp_secret")
    assert await run_command(runtime, "redact", user.id, "--reason", "a token") == 1
    assert "cannot be undone" in capsys.readouterr().err
    assert (await runtime.ledger.nodes.get(user.id)).redaction is None
    assert await run_command(runtime, "redact", user.id, "--reason", "a token", "--yes") == 0
    assert (await runtime.ledger.nodes.get(user.id)).content == MARKER
    assert await run_command(runtime, "check", session.id) == 0


def test_redact_tokens_are_tokens_of_their_tenant():
    from service.config import Settings
    from service.errors import ConfigurationError

    settings = Settings.from_env({"CTXDAG_API_TOKENS": "a=t1", "CTXDAG_REDACT_TOKENS": "r=t1"})
    assert settings.api_tokens == {"a": "t1", "r": "t1"} and settings.redact_tokens == {"r": "t1"}
    for value in ("r", "a=t2", "=t1"):
        with pytest.raises(ConfigurationError):
            Settings.from_env({"CTXDAG_API_TOKENS": "a=t1", "CTXDAG_REDACT_TOKENS": value})
