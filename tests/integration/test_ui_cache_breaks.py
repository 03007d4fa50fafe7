"""The viewer says where each call's prompt cache broke and which write broke it: in headless
chromium against the real app on a real Neo4j (the fixtures of test_ui_browser.py), with the
Anthropic stub as the model so the summarizer's call sends the conversation's own prefix.
A compaction, a pin, an edit and an unpin are written over GraphQL; the calls list and each
call's detail card must say what `ModelCall.cacheBreak` says."""
from __future__ import annotations

import uuid

import pytest

from tests.browser import LiveService
from tests.integration.test_ui_browser import COMPACT, SEND, browser, viewer  # noqa: F401
from tests.stubs.anthropic_stub import AnthropicStub

BREAKS = ("query($s: ID!) { session(id: $s) { modelCalls(first: 50) { nodes { id purpose"
          " cacheBreak { position cause nodeId previousNodeId } } } } }")
WORDS = {"COMPACTION": "a compaction", "PIN": "a pin", "EDIT": "an edit, retry or fork",
         "UNPIN": "an unpin"}
NOTE = ("const e = document.querySelector(`[data-call-id=\"${arguments[0]}\"] .c-cache`);"
        " return e && {cause: e.dataset.cause || null, text: e.textContent}")
DETAIL = ("const e = document.querySelector('#detail .cache-break');"
          " return e && {cause: e.dataset.cause, text: e.textContent,"
          " goto: e.querySelector('[data-goto]').dataset.goto}")


@pytest.fixture(scope="module")
def service(neo4j_server):
    run = uuid.uuid4().hex[:8]
    with AnthropicStub() as stub, LiveService(
            neo4j_server.uri, neo4j_server.user, neo4j_server.password,
            tokens={f"ui-token-{run}": f"ui-tenant-{run}"},
            env={"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": stub.base_url,
                 "CTXDAG_ANTHROPIC_MODEL": "claude-stub",
                 "CTXDAG_ANTHROPIC_MAX_RETRIES": "0"}) as live:
        yield live


def test_the_calls_say_where_the_cache_broke_and_by_which_write(viewer, service):
    session = service.gql("mutation { createSession(title: \"Cache breaks\", systemPrompt:"
                          " \"You are terse.\") { id } }")["createSession"]["id"]

    def send(i: int) -> dict:
        return service.gql(SEND, s=session, c=f"Question {i}: " + "tell me more. " * 8
                           )["sendMessage"]

    turns = [send(i) for i in range(5)]
    compaction = service.gql(COMPACT, s=session, k=150)["compact"]
    assert compaction["status"] == "COMPACTED"
    summary = compaction["summary"]["id"]
    covered = turns[0]["userNode"]["id"]
    assert covered in compaction["summary"]["coversIds"]
    send(5)  # broken by the compaction
    service.gql("mutation($n: ID!) { pin(nodeId: $n) { id } }", n=covered)
    last = send(6)  # broken by the pin
    service.gql("mutation($n: ID!, $c: String!) { editMessage(nodeId: $n, content: $c) { callId } }",
                n=last["userNode"]["id"], c="Question 6, put otherwise.")
    service.gql("mutation($n: ID!) { unpin(nodeId: $n) { id } }", n=covered)
    send(7)  # broken by the unpin

    calls = service.gql(BREAKS, s=session)["session"]["modelCalls"]["nodes"]
    breaks = {c["id"]: c["cacheBreak"] for c in calls if c["cacheBreak"]}
    by_cause = {b["cause"]: (call_id, b) for call_id, b in breaks.items()}
    assert set(WORDS) <= set(by_cause), by_cause
    assert by_cause["COMPACTION"][1]["nodeId"] == summary
    assert by_cause["PIN"][1]["nodeId"] == covered
    assert by_cause["UNPIN"][1]["previousNodeId"] == covered

    viewer.open(session, token=service.token)
    viewer.wait(lambda: summary in viewer.drawn(), what="the session to draw")
    viewer.console()
    viewer.show_tab("calls")
    # Every listed call: its note names the cause the API gives, or none when nothing broke.
    for call in calls:
        viewer.wait(lambda: viewer.js(NOTE, call["id"]), what=f"call {call['id']}'s note")
        note = viewer.js(NOTE, call["id"])
        cause = (call["cacheBreak"] or {}).get("cause")
        assert note["cause"] == cause, (call, note)
        if cause in WORDS:
            assert f"broken by {WORDS[cause]}" in note["text"]

    # Each call's card says at which read, by what, and goes to the node that write concerns.
    for cause, node in (("COMPACTION", summary), ("PIN", covered), ("UNPIN", covered)):
        call_id, found = by_cause[cause]
        viewer.click_call(call_id)
        viewer.wait(lambda: (viewer.js(DETAIL) or {}).get("cause") == cause,
                    what=f"the detail of the call broken by {cause}")
        detail = viewer.js(DETAIL)
        assert f"broke at read {found['position']}: {WORDS[cause]}" in detail["text"]
        assert detail["goto"] == node
    call_id, found = by_cause["EDIT"]
    viewer.click_call(call_id)
    viewer.wait(lambda: (viewer.js(DETAIL) or {}).get("cause") == "EDIT", what="the edit's card")
    assert viewer.js(DETAIL)["goto"] == found["nodeId"]
    assert f"broke at read {found['position']}: {WORDS['EDIT']}" in viewer.js(DETAIL)["text"]
    assert viewer.console("SEVERE") == []
