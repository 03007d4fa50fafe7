"""Bad input: a clear, typed error, and nothing written (the stored session is unchanged)."""
import pytest

from service.errors import BadInput, CtxdagError, NotFound
from service.store import Ledger, Limits
from tests.integration.helpers import chat, snapshot


@pytest.fixture
async def world(ledger, db):
    """A session with a fork, a second session of the same tenant, one of another tenant."""
    session = await ledger.sessions.create("main")
    u1, a1, u2, a2 = await chat(ledger, session, "q1", "a1", "q2", "a2")
    other_session = await ledger.sessions.create("other")
    (other_node,) = await chat(ledger, other_session, "elsewhere")
    stranger = Ledger.open(db, ledger.tenant + "-stranger", Limits())
    foreign = await stranger.sessions.create("foreign")
    (foreign_node,) = await chat(stranger, foreign, "not yours")
    await ledger.head.rewind(session.id, u2.id)
    return dict(session=session, u1=u1, a1=a1, u2=u2, a2=a2, other_node=other_node,
                foreign_node=foreign_node, foreign_session=foreign)


def cases(w, limits: Limits):
    sid = w["session"].id
    big = "x" * (limits.max_content_bytes + 1)
    big_utf8 = "é" * (limits.max_content_bytes // 2 + 1)  # under the limit in characters
    yield "unknown session", NotFound, lambda L: L.head.append_message("ses_nope", "user", "x")
    yield "foreign session", NotFound, lambda L: L.head.append_message(
        w["foreign_session"].id, "user", "x")
    yield "unknown predecessor", NotFound, lambda L: L.head.append_message(
        sid, "user", "x", predecessor_id="nod_nope")
    yield "foreign-tenant predecessor", NotFound, lambda L: L.head.append_message(
        sid, "user", "x", predecessor_id=w["foreign_node"].id)
    yield "predecessor from another session", BadInput, lambda L: L.head.append_message(
        sid, "user", "x", predecessor_id=w["other_node"].id)
    yield "unknown caller", NotFound, lambda L: L.head.append_message(
        sid, "tool", "x", caller_id="nod_nope")
    yield "caller from another session", BadInput, lambda L: L.head.append_message(
        sid, "tool", "x", caller_id=w["other_node"].id)
    yield "empty content", BadInput, lambda L: L.head.append_message(sid, "user", "")
    yield "blank content", BadInput, lambda L: L.head.append_message(sid, "user", " \n\t ")
    yield "oversized content", BadInput, lambda L: L.head.append_message(sid, "user", big)
    yield "oversized in UTF-8 bytes", BadInput, lambda L: L.head.append_message(
        sid, "user", big_utf8)
    yield "lone surrogate", BadInput, lambda L: L.head.append_message(sid, "user", "a\ud800b")
    yield "non-string content", BadInput, lambda L: L.head.append_message(sid, "user", 42)
    yield "invalid role", BadInput, lambda L: L.head.append_message(sid, "wizard", "x")
    yield "system role", BadInput, lambda L: L.head.append_message(sid, "system", "x")
    yield "summary role", BadInput, lambda L: L.head.append_message(sid, "summary", "x")
    yield "metadata not an object", BadInput, lambda L: L.head.append_message(
        sid, "user", "x", metadata=["a"])
    yield "metadata not JSON", BadInput, lambda L: L.head.append_message(
        sid, "user", "x", metadata={"f": float("nan")})
    yield "metadata too large", BadInput, lambda L: L.head.append_message(
        sid, "user", "x", metadata={"k": "v" * limits.max_metadata_bytes})
    yield "oversized id", BadInput, lambda L: L.head.append_message("s" * 500, "user", "x")
    yield "empty id", BadInput, lambda L: L.head.set_head(sid, "")
    yield "checkout unknown node", NotFound, lambda L: L.head.set_head(sid, "nod_nope")
    yield "checkout foreign-tenant node", NotFound, lambda L: L.head.set_head(
        sid, w["foreign_node"].id)
    yield "checkout node of another session", BadInput, lambda L: L.head.set_head(
        sid, w["other_node"].id)
    yield "rewind to a non-ancestor", BadInput, lambda L: L.head.rewind(sid, w["other_node"].id)
    yield "rewind forward, past HEAD", BadInput, lambda L: L.head.rewind(sid, w["a2"].id)
    yield "rewind to unknown node", NotFound, lambda L: L.head.rewind(sid, "nod_nope")
    yield "retry a user message", BadInput, lambda L: L.head.retry(w["u2"].id, "x")
    yield "retry unknown node", NotFound, lambda L: L.head.retry("nod_nope", "x")
    yield "retry foreign-tenant node", NotFound, lambda L: L.head.retry(w["foreign_node"].id, "x")
    yield "edit an assistant reply", BadInput, lambda L: L.head.edit(w["a2"].id, "x")
    yield "edit with empty content", BadInput, lambda L: L.head.edit(w["u2"].id, "")
    yield "delete a non-tip", BadInput, lambda L: L.head.delete_branch(sid, w["u2"].id)
    yield "delete unknown tip", NotFound, lambda L: L.head.delete_branch(sid, "nod_nope")
    yield "delete tip of another session", BadInput, lambda L: L.head.delete_branch(
        sid, w["other_node"].id)
    yield "reserved meta key", BadInput, lambda L: L.sessions.update(
        sid, extra_meta={"_last_summary_id": "x"})
    yield "title too long", BadInput, lambda L: L.sessions.update(
        sid, title="t" * 201, set_title=True)
    yield "unknown session update", NotFound, lambda L: L.sessions.update(
        "ses_nope", title="x", set_title=True)


async def test_every_bad_input_is_a_coded_error_and_writes_nothing(ledger, world):
    sid = world["session"].id
    before = await snapshot(ledger, sid)
    tried = 0
    for label, expected, call in cases(world, Limits()):
        with pytest.raises(expected) as caught:
            await call(ledger)
        error = caught.value
        assert isinstance(error, CtxdagError), label
        assert error.code in ("NOT_FOUND", "BAD_INPUT"), label
        assert error.message and "Traceback" not in error.message, label
        assert await snapshot(ledger, sid) == before, f"{label} changed the stored session"
        tried += 1
    print(f"bad inputs tried: {tried}")
    assert tried >= 35


async def test_not_found_names_the_missing_id(ledger):
    with pytest.raises(NotFound) as caught:
        await ledger.sessions.get("ses_missing")
    assert caught.value.id == "ses_missing"
    assert "ses_missing" in caught.value.message
