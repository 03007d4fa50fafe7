"""The tools a Codex rollout names (session_meta.dynamic_tools) are the imported session's
tool set (docs/guides/tool-sets.md, docs/guides/importing-sessions.md): one session-wide
version, offered to the turns that continue the session; a refused definition degraded;
a grown file writes no second version unless it names other tools, and never overrides a
setTools with the tools it named before."""
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from service.errors import BadInput
from service.store.backup import export_session
from service.transcripts.batch import import_text
from service.transcripts.model import DegradedKind, Mode
from service.turns import tool_sets

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
ROLLOUT = FIXTURES / "codex" / "rollout-2026-03-02T10-00-00-019cb0a1-tools.jsonl"
CC_SESSION = FIXTURES / "claude_code" / "session.jsonl"
NAMED = ["lookup_ticket", "post_reply", "close_ticket", "add_note"]
TAKEN = ["lookup_ticket", "post_reply", "add_note"]  # close_ticket's refused schema left out


def refusing_close_ticket(text: str) -> str:
    """The rollout with close_ticket's schema one JSON Schema refuses."""
    assert text.count('"minLength": 1') == 1
    return text.replace('"minLength": 1', '"minLength": "short"')


def grown_with_other_tools(text: str) -> str:
    """The rollout as Codex goes on writing it after its client registered other tools: a
    session_meta naming them, then a turn."""
    meta = json.loads(text.splitlines()[0])
    meta["timestamp"] = "2026-03-02T11:00:00.000Z"
    meta["payload"]["dynamic_tools"] = [{
        "type": "function", "name": "escalate", "description": "Escalate a ticket.",
        "inputSchema": {"type": "object", "properties": {"ticket_id": {"type": "string"}},
                        "required": ["ticket_id"]}}]
    lines = [meta, *({"timestamp": f"2026-03-02T11:00:0{i}.000Z", "type": "response_item",
                      "payload": p} for i, p in enumerate((
                          {"type": "message", "role": "user",
                           "content": [{"type": "input_text", "text": "Escalate it."}]},
                          {"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "Escalated."}]}),
                          start=1))]
    return text + "".join(json.dumps(line) + "\n" for line in lines)


def names(version) -> list[str]:
    return [t["name"] for t in version.tools]


async def history(ledger, session_id):
    return (await ledger.tool_sets.histories([session_id]))[session_id]


async def test_an_imported_rollout_offers_the_tools_it_names(ledger, turns):
    mode = Mode()
    stored = await import_text(ledger, ROLLOUT.read_text(), ROLLOUT.name, None, mode)
    assert mode.degraded == []
    (version,) = await history(ledger, stored.session_id)
    assert (version.version, version.anchor_id, version.tool_choice) == (1, None, None)
    assert version.created_at == datetime(2026, 3, 2, 10, 0, 1, tzinfo=timezone.utc)
    assert names(version) == NAMED
    assert version.tools[0]["input_schema"]["required"] == ["ticket_id"]
    assert (await ledger.tool_sets.in_force(stored.session_id)) == version
    # A turn continuing the imported session is offered them, and its call says so.
    offered = await tool_sets.offered(ledger, stored.session_id, None)
    assert [t.name for t in offered.tools] == NAMED
    result = await turns.send_message(stored.session_id, "Anything else on T-42?")
    assert result.error is None
    call = await ledger.calls.get(result.call_id)
    assert call.tools_sha256 == version.tools_sha256
    # A backup of it carries the version, as one of a setTools does.
    document = await export_session(ledger.db, ledger.tenant, stored.session_id,
                                    ledger.limits)
    assert [v["properties"]["version"] for v in document["tool_set_versions"]] == [1]


async def test_a_tool_the_ledger_refuses_is_left_out_and_listed(ledger):
    mode = Mode()
    stored = await import_text(ledger, refusing_close_ticket(ROLLOUT.read_text()),
                               ROLLOUT.name, None, mode)
    assert [(d.line, d.kind) for d in mode.degraded] == [(1, DegradedKind.INVALID_TOOL)]
    assert mode.degraded[0].reason.startswith("tool 'close_ticket': input_schema")
    (version,) = await history(ledger, stored.session_id)
    assert names(version) == TAKEN


async def test_strict_refuses_the_rollout_and_writes_nothing(ledger):
    with pytest.raises(BadInput, match="close_ticket"):
        await import_text(ledger, refusing_close_ticket(ROLLOUT.read_text()), ROLLOUT.name,
                          None, Mode(strict=True))
    assert await ledger.sessions.count() == 0


async def test_a_file_naming_no_tools_sets_none(ledger):
    stored = await import_text(ledger, CC_SESSION.read_text(), CC_SESSION.name, None)
    assert await history(ledger, stored.session_id) == []
    assert await ledger.tool_sets.in_force(stored.session_id) is None


async def test_growth_writes_no_second_version_unless_the_tools_change(ledger):
    text = ROLLOUT.read_text()
    lines = text.splitlines(keepends=True)
    first = await import_text(ledger, "".join(lines[:7]), ROLLOUT.name, None)
    again = await import_text(ledger, text, ROLLOUT.name, None)  # grown, same tools
    assert again.session_id == first.session_id and again.written > 0
    await import_text(ledger, text, ROLLOUT.name, None)  # unchanged
    (version,) = await history(ledger, first.session_id)
    assert names(version) == NAMED

    grown = grown_with_other_tools(text)
    for _ in range(2):  # the second import finds the version written by the first
        await import_text(ledger, grown, ROLLOUT.name, None)
        versions = await history(ledger, first.session_id)
        assert [v.version for v in versions] == [1, 2]
    assert names(versions[1]) == ["escalate"] and versions[1].anchor_id is None
    assert versions[1].created_at == datetime(2026, 3, 2, 11, 0, tzinfo=timezone.utc)
    assert names(await ledger.tool_sets.in_force(first.session_id)) == ["escalate"]
    assert await ledger.violations(first.session_id) == []


async def test_a_set_tools_made_after_the_import_stays_in_force(ledger):
    text = ROLLOUT.read_text()
    stored = await import_text(ledger, text, ROLLOUT.name, None)
    mine = {"name": "triage", "description": "Triage a ticket.",
            "input_schema": {"type": "object", "properties": {}}}
    await tool_sets.set_tools(ledger, stored.session_id, [mine])
    regrown = text + json.dumps({
        "timestamp": "2026-03-02T10:00:20.000Z", "type": "response_item",
        "payload": {"type": "message", "role": "user",
                    "content": [{"type": "input_text", "text": "Thanks."}]}}) + "\n"
    await import_text(ledger, regrown, ROLLOUT.name, None)  # the same tools named
    assert [v.version for v in await history(ledger, stored.session_id)] == [1, 2]
    assert names(await ledger.tool_sets.in_force(stored.session_id)) == ["triage"]
