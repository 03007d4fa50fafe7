"""Bad input: a clear, typed error, and nothing written (the stored session is unchanged)."""
import base64

import pytest

from service.errors import BadInput, CtxdagError, NotFound
from service.store import CallRecord, Ledger, Limits, Purpose
from service.model.ids import utcnow
from tests.integration.helpers import chat, session_calls, snapshot

TENANT_RECORDS = """
CALL () {
  MATCH (x:Session {tenant: $tenant}) RETURN x
  UNION
  MATCH (x:Node {tenant: $tenant}) RETURN x
  UNION
  MATCH (x:Call {tenant: $tenant}) RETURN x
}
RETURN labels(x) AS labels, properties(x) AS properties,
  [(x)-[r]->(y) | [type(r), properties(r), y.id]] AS edges
"""


async def tenant_records(ledger):
    """Every session, node and call of the tenant, with their outgoing relationships."""
    rows, _, _ = await ledger.db.driver.execute_query(TENANT_RECORDS, tenant=ledger.tenant)
    return sorted(repr((r["labels"], sorted(r["properties"].items()),
                        sorted(map(repr, r["edges"])))) for r in rows)


def cursor(text):
    return base64.urlsafe_b64encode(text.encode()).decode()


def nested_metadata(depth):
    metadata = {}
    for _ in range(depth):
        metadata = {"k": metadata}
    return metadata


@pytest.fixture
async def world(ledger, db, turns):
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
                foreign_node=foreign_node, foreign_session=foreign, turns=turns)


# What a terminal or a log line shown a name would act on, or break at.
CONTROL_CHARACTERS = {"ESC": "\x1b", "NUL": "\x00", "BEL": "\x07", "DEL": "\x7f",
                      "U+2028": "\u2028", "a C1 control": "\x9b", "a tab": "\t"}


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
    yield from session_cases(w, limits)
    yield from empty_id_cases(w)
    yield from call_cases(w, limits)


def session_cases(w, limits: Limits):
    sid = w["session"].id
    for meta in (5, True, False, ["a"], "{}"):
        yield f"extra_meta {meta!r} on create", BadInput, lambda L, m=meta: L.sessions.create(
            extra_meta=m)
        yield f"extra_meta {meta!r} on update", BadInput, lambda L, m=meta: L.sessions.update(
            sid, extra_meta=m)
    yield "metadata nested too deeply", BadInput, lambda L: L.head.append_message(
        sid, "user", "x", metadata=nested_metadata(100_000))
    odd_cursors = {
        "100k nested lists": cursor("[" * 100_000 + "]" * 100_000),
        "1,500 nested lists": cursor("[" * 1_500 + "]" * 1_500),
        "an object": cursor('{"a": 1}'),
        "a huge number": cursor("9" * 2_900),
        "an overflowing float": cursor("1e999"),
        "a time without offset": cursor('["2024-01-01T00:00:00", "ses_x"]'),
        "a non-string id": cursor('["2024-01-01T00:00:00+00:00", ["ses_x"]]'),
        "a lone surrogate": cursor('["2024-01-01T00:00:00+00:00", "\\ud800"]'),
        "not base64": "%%%",
        "not ASCII": "é",
        "empty": "",
    }
    for label, after in odd_cursors.items():
        yield f"sessions cursor of {label}", BadInput, lambda L, a=after: L.sessions.list(after=a)


def empty_id_cases(w):
    sid, u1 = w["session"].id, w["u1"].id
    yield "empty predecessor id", BadInput, lambda L: L.head.append_message(
        sid, "user", "x", predecessor_id="")
    yield "empty caller id", BadInput, lambda L: L.head.append_message(
        sid, "tool", "x", caller_id="")
    yield "empty head id to render", BadInput, lambda L: L.views.render(sid, "")
    yield "empty absorbed summary id", BadInput, lambda L: L.summaries.persist(
        sid, [u1], "A summary.", absorbed_id="", compacted_head_id=u1, retained_ids=[],
        expected_version=0)
    yield "empty compacted head id", BadInput, lambda L: L.summaries.persist(
        sid, [u1], "A summary.", absorbed_id=None, compacted_head_id="", retained_ids=[],
        expected_version=0)
    yield "empty retained id", BadInput, lambda L: L.summaries.persist(
        sid, [u1], "A summary.", absorbed_id=None, compacted_head_id=u1, retained_ids=[""],
        expected_version=0)
    yield "empty session id to deliver to", BadInput, lambda L: w["turns"].spawn_task(
        sid, w["a1"].id, "An aside.", deliver_to="")
    yield "empty session id for a call", BadInput, lambda L: w["turns"].record_call(
        "", [u1], "m")
    yield "empty head id of a call", BadInput, lambda L: L.calls.record(
        sid, call_record(w, head_id=""))


def call_record(w, **fields):
    now = utcnow()
    return CallRecord(**{"purpose": Purpose.CHAT, "provider": "offline", "model": "m",
                         "read_ids": (w["session"].root_id, w["u1"].id), "started_at": now,
                         "finished_at": now, **fields})


def call_cases(w, limits: Limits):
    sid, root, turns = w["session"].id, w["session"].root_id, w["turns"]
    huge = "m" * (2 * 1024 * 1024)
    for label, model in (("of 201 characters", "m" * 201), ("of 2 MiB", huge),
                         ("with a lone surrogate", "claude\ud800"), ("blank", " "),
                         ("not a string", 7)):
        yield f"model {label}", BadInput, lambda L, m=model: turns.record_call(sid, [root], m)
    yield "read ids repeated", BadInput, lambda L: turns.record_call(sid, [root] * 3, "m")
    yield "read ids over the cap", BadInput, lambda L: turns.record_call(
        sid, [root] * (limits.max_call_reads + 1), "m")
    yield "unknown read ids", BadInput, lambda L: turns.record_call(
        sid, [f"nod_missing_{i}" for i in range(50)], "m")
    yield "a foreign read id", BadInput, lambda L: turns.record_call(
        sid, [w["foreign_node"].id], "m")
    yield "read ids as one string", BadInput, lambda L: turns.record_call(sid, root, "m")
    yield "an empty read id", BadInput, lambda L: turns.record_call(sid, [root, ""], "m")
    yield "usage beyond 64 bits", BadInput, lambda L: turns.record_call(
        sid, [root], "m", usage={"input_tokens": 2**64})
    yield "empty output", BadInput, lambda L: turns.record_call(sid, [root], "m", output="")
    yield "a call into an unknown session", NotFound, lambda L: turns.record_call(
        "ses_nope", [root], "m")
    yield "a call reading a node twice", BadInput, lambda L: L.calls.record(
        sid, call_record(w, read_ids=(root, root)))
    yield "a call with an error text over the limit", BadInput, lambda L: L.calls.record(
        sid, call_record(w, error_code="MODEL_ERROR",
                         error_message="e" * (limits.max_content_bytes + 1)))
    yield "a call with a provider of 201 characters", BadInput, lambda L: L.calls.record(
        sid, call_record(w, provider="p" * 201))
    yield "a reply recorded with a repeated read", BadInput, lambda L: L.head.append_message(
        sid, "assistant", "A reply.", call=call_record(w, read_ids=(root, root)))
    for name, char in CONTROL_CHARACTERS.items():
        yield f"a label holding {name}", BadInput, lambda L, c=char: L.labels.set(
            w["u1"].id, f"before{c}after")
        yield f"a branch name holding {name}", BadInput, lambda L, c=char: L.branch_names.set(
            w["a2"].id, f"before{c}after")


async def test_every_bad_input_is_a_coded_error_and_writes_nothing(ledger, world):
    sid = world["session"].id
    before = await snapshot(ledger, sid)
    everything_before = await tenant_records(ledger)
    tried = 0
    for label, expected, call in cases(world, Limits()):
        with pytest.raises(expected) as caught:
            await call(ledger)
        error = caught.value
        assert isinstance(error, CtxdagError), label
        assert error.code in ("NOT_FOUND", "BAD_INPUT"), label
        assert error.message and "Traceback" not in error.message, label
        assert await snapshot(ledger, sid) == before, f"{label} changed the stored session"
        assert await tenant_records(ledger) == everything_before, f"{label} wrote something"
        tried += 1
    print(f"bad inputs tried: {tried}")
    assert tried >= 100


async def test_not_found_names_the_missing_id(ledger):
    with pytest.raises(NotFound) as caught:
        await ledger.sessions.get("ses_missing")
    assert caught.value.id == "ses_missing"
    assert "ses_missing" in caught.value.message


async def test_recorded_calls_name_a_bounded_number_of_bad_read_ids(ledger, turns):
    session = await ledger.sessions.create()
    unknown = [f"nod_missing_{i:02d}" for i in range(50)]
    with pytest.raises(BadInput) as caught:
        await turns.record_call(session.id, [session.root_id, *unknown], "m")
    message = caught.value.message
    assert message.startswith(f"50 read ids are not nodes of session {session.id}: ")
    assert message.endswith("nod_missing_09 and 40 more")
    assert "nod_missing_10" not in message

    repeated = [f"nod_{i:02d}" for i in range(15)] * 2
    with pytest.raises(BadInput) as caught:
        await turns.record_call(session.id, repeated, "m")
    assert caught.value.message == ("the read ids name 15 nodes more than once: "
                                    + ", ".join(repeated[:10]) + " and 5 more")

    with pytest.raises(BadInput, match="is 10001; a recorded call may read at most 10000"):
        await turns.record_call(session.id, [session.root_id] * 10_001, "m")
    with pytest.raises(BadInput, match="model is 201 characters; the limit is 200"):
        await turns.record_call(session.id, [session.root_id], "m" * 201)
    assert await session_calls(ledger, session.id) == []


async def test_the_read_cap_is_a_setting(db, tenant, events):
    from service.config import Settings
    from service.runtime import ledger_for
    from service.turns.providers import OfflineProvider
    from service.turns.service import Turns
    from tests.integration.helpers import make_compactor

    settings = Settings.from_env({"CTXDAG_TENANT": tenant, "CTXDAG_MAX_CALL_READS": "3"})
    ledger = ledger_for(db, settings, events)
    assert ledger.limits.max_call_reads == 3
    turns = Turns(ledger, make_compactor(ledger), OfflineProvider())
    session = await ledger.sessions.create()
    u, a = await chat(ledger, session, "A question.", "An answer.")
    with pytest.raises(BadInput, match="at most 3 nodes"):
        await turns.record_call(session.id, [session.root_id, u.id, a.id, "nod_x"], "m")
    call = await turns.record_call(session.id, [session.root_id, u.id, a.id], "m")
    assert call.read_ids == (session.root_id, u.id, a.id)
    readings = await ledger.calls.reading(session.root_id)
    assert [r.call.id for r in readings] == [call.id]
