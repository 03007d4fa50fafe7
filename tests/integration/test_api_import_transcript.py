"""importTranscript over HTTP, through the real app: a transcript posted as text is a
session, a grown one extends it (read on from the reading the server kept of it under its
file name), the same one again writes nothing; bad lines are BAD_INPUT naming the line; a
subscribed viewer sees what an import adds."""
import asyncio
import threading
import uuid
from pathlib import Path

import httpx
import pytest

from service.store import backup
from service.transcripts import batch, model, streamed

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
CODEX = FIXTURES / "codex" / "rollout-2025-09-14T08-00-00-0199a1b2-codex.jsonl"
CC_SESSION = FIXTURES / "claude_code" / "session.jsonl"

IMPORT = """
mutation ($content: String!, $format: TranscriptFormat, $fileName: String,
          $strict: Boolean! = false) {
  importTranscript(content: $content, format: $format, fileName: $fileName, strict: $strict) {
    outcome written session { id nodeCount headId } degraded { file line kind reason }
  }
}"""


async def test_import_extend_and_reimport_a_transcript(api):
    lines = CODEX.read_text().splitlines(keepends=True)
    first = (await api.client(IMPORT, content="".join(lines[:20]), format="CODEX",
                              fileName=CODEX.name))["importTranscript"]
    sid = model.session_id(api.tenant, "codex", "0199a1b2-codex")
    assert first["outcome"] == "NEW" and first["session"]["id"] == sid
    assert first["written"] == first["session"]["nodeCount"] == 11  # ROOT and 10 turns
    grown = (await api.client(IMPORT, content="".join(lines),
                              fileName=CODEX.name))["importTranscript"]
    # 10 turns, the 4 other items of a replacement history, 2 summaries
    assert grown["outcome"] == "EXTENDED" and grown["written"] == 16
    assert grown["session"]["nodeCount"] == 27
    assert grown["session"]["headId"] == model.node_id(api.tenant, "codex", "0199a1b2-codex",
                                                       "line35")
    again = (await api.client(IMPORT, content="".join(lines)))["importTranscript"]
    assert (again["outcome"], again["written"]) == ("UNCHANGED", 0)
    assert again["session"] == grown["session"]


async def test_a_grown_transcript_posted_again_is_read_on_from_the_reading_kept_of_it(
        api, events, monkeypatch):
    from service.store import Ledger, Limits
    from service.transcripts import kept
    from tests.integration.helpers import assert_sound
    from tests.integration.test_follow_growth import (claude_code_lines, same_as_imported_whole,
                                                      statements)
    from tests.integration.test_import_kept_readings import fed

    monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)
    lines = claude_code_lines(420, session=f"api-kept-{uuid.uuid4().hex[:6]}")
    first = (await api.client(IMPORT, content="".join(lines[:300]),
                              fileName="live.jsonl"))["importTranscript"]
    assert first["outcome"] == "NEW"
    gained, whole = fed(monkeypatch)
    ran = statements(monkeypatch, api.db)
    for end in (360, 420):
        grown = (await api.client(IMPORT, content="".join(lines[:end]),
                                  fileName="live.jsonl"))["importTranscript"]
        assert grown["outcome"] == "EXTENDED" and grown["written"] > 0
    assert (gained, whole) == ([60, 60], [])  # the lines each text gained, not the text
    names = [name for name, _ in ran]
    assert names.count("transcript_known") == 2 and "transcript_stored" not in names
    monkeypatch.undo()
    _, whole = fed(monkeypatch)
    again = (await api.client(IMPORT, content="".join(lines),
                              fileName="live.jsonl"))["importTranscript"]
    assert again["outcome"] == "UNCHANGED" and whole == []  # recognised unparsed
    ledger = Ledger.open(api.db, api.tenant, Limits(), None)
    sid = first["session"]["id"]
    await assert_sound(ledger, sid)
    await same_as_imported_whole(api.db, events, ledger, sid, "".join(lines), "live.jsonl")


async def test_a_transcript_cut_shorter_than_its_import_is_a_conflict(api):
    lines = CODEX.read_text().replace("0199a1b2-codex", "0199a1b2-cut").splitlines(
        keepends=True)
    first = (await api.client(IMPORT, content="".join(lines[:20]),
                              fileName=CODEX.name))["importTranscript"]
    errors = await api.client.errors(IMPORT, content="".join(lines[:10]), fileName=CODEX.name)
    assert [e["extensions"]["code"] for e in errors] == ["CONFLICT"]
    assert errors[0]["message"].startswith(f"{CODEX.name}: the file is shorter than the ")
    again = (await api.client(IMPORT, content="".join(lines[:20])))["importTranscript"]
    assert again["outcome"] == "UNCHANGED" and again["session"] == first["session"]


async def test_a_claude_code_transcript_without_a_file_name_is_named_by_its_session(api):
    imported = (await api.client(IMPORT, content=CC_SESSION.read_text()))["importTranscript"]
    assert imported["session"]["id"] == model.session_id(api.tenant, "claude-code",
                                                         "0b5e7c1e-session")


async def test_a_bad_line_is_bad_input_naming_it_and_writes_nothing(api):
    head = "".join(CODEX.read_text().splitlines(keepends=True)[:6])
    text = head.replace("0199a1b2-codex", "0199a1b2-bad") + "{not json\n"
    errors = await api.client.errors(IMPORT, content=text, fileName="rollout.jsonl",
                                     strict=True)
    assert [e["extensions"] for e in errors] == [{"code": "BAD_INPUT", "line": 7}]
    assert errors[0]["message"].startswith("rollout.jsonl:7: the line is not valid JSON")
    errors = await api.client.errors(IMPORT, content=text, strict=True)
    assert errors[0]["message"].startswith("line 7: ")
    sid = model.session_id(api.tenant, "codex", "0199a1b2-bad")
    missing = await api.client.errors("query ($id: ID!) { session(id: $id) { id } }", id=sid)
    assert [e["extensions"]["code"] for e in missing] == ["NOT_FOUND"]


async def test_a_file_name_off_one_line_is_bad_input_and_writes_nothing(api):
    """The name heads every `FILE:LINE` error: a newline or NUL in it would forge lines."""
    text = CODEX.read_text().replace("0199a1b2-codex", "0199a1b2-named")
    for name in ("rollout\n1:fine.jsonl", "rollout\x00.jsonl", "roll\x1b[2Jout.jsonl"):
        errors = await api.client.errors(IMPORT, content=text, fileName=name)
        assert [e["extensions"]["code"] for e in errors] == ["BAD_INPUT"], name
        assert errors[0]["message"].startswith("fileName must be one line"), errors
    sid = model.session_id(api.tenant, "codex", "0199a1b2-named")
    missing = await api.client.errors("query ($id: ID!) { session(id: $id) { id } }", id=sid)
    assert [e["extensions"]["code"] for e in missing] == ["NOT_FOUND"]


@pytest.mark.parametrize("stage", [(batch, "reading_of", False), (backup, "_parse", False),
                                   (streamed.Reading, "feed", True), (backup, "_parse", True)],
                         ids=["reading the file", "checking its document",
                              "reading a large file", "checking its parts"])
async def test_healthz_answers_while_an_import_is_read_and_checked(api, monkeypatch, stage):
    """Each stage of an import that takes long on a large file is held until /healthz has
    answered; were it run on the event loop, /healthz could not answer while it is held. A
    large text (here every text) is imported in parts (service/transcripts/streamed.py)."""
    module, name, in_parts = stage
    if in_parts:
        monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", 0)
    started, release, released = threading.Event(), threading.Event(), []
    work = getattr(module, name)

    def held(*args, **kwargs):
        started.set()
        released.append(release.wait(30))
        return work(*args, **kwargs)

    monkeypatch.setattr(module, name, held)
    text = CODEX.read_text().replace("0199a1b2-codex", f"0199a1b2-{uuid.uuid4().hex[:8]}")
    large = asyncio.create_task(api.client(IMPORT, content=text, fileName=CODEX.name))
    try:
        assert await asyncio.to_thread(started.wait, 30)
        async with httpx.AsyncClient(timeout=30) as http:
            assert (await http.get(f"{api.url}/healthz")).json()["status"] == "ok"
        assert not large.done()
    finally:
        release.set()
    assert (await large)["importTranscript"]["outcome"] == "NEW"
    assert released and all(released)


async def test_a_placeholder_image_is_mentioned_and_listed_unless_strict(api):
    text = CODEX.read_text().replace("0199a1b2-codex", "0199a1b2-odd")
    url = text[text.index("data:image/png"):].split('"')[0]
    text = text.replace(url, "[REDACTED_IMAGE_URL 9f]")
    errors = await api.client.errors(IMPORT, content=text, fileName=CODEX.name, strict=True)
    assert [e["extensions"] for e in errors] == [{"code": "BAD_INPUT", "line": 28}]
    assert "blocks[1].source.url must be an http(s) URL" in errors[0]["message"]
    imported = (await api.client(IMPORT, content=text, fileName=CODEX.name))["importTranscript"]
    clean = CODEX.read_text().replace("0199a1b2-codex", "0199a1b2-clean")
    whole = (await api.client(IMPORT, content=clean, fileName=CODEX.name))["importTranscript"]
    assert whole["degraded"] == [] and whole["session"]["nodeCount"] == 27
    assert imported["outcome"] == "NEW" and imported["session"]["nodeCount"] == 27  # a mention
    [entry] = imported["degraded"]
    assert (entry["file"], entry["line"], entry["kind"]) == (CODEX.name, 28, "INVALID_BLOCK")
    assert entry["reason"].startswith("image.source.url must be an http(s) URL")
    again = (await api.client(IMPORT, content=text, fileName=CODEX.name))["importTranscript"]
    assert again["outcome"] == "UNCHANGED" and again["degraded"] == imported["degraded"]


EVENTS = """subscription ($s: ID!) { sessionEvents(sessionId: $s) {
  type ... on NodeAppended { nodeId role predecessorId } ... on HeadMoved { headId }
} }"""


async def test_a_subscriber_sees_the_nodes_a_grown_transcript_adds(api):
    text = CODEX.read_text().replace("0199a1b2-codex", "0199a1b2-live")
    lines = text.splitlines(keepends=True)
    first = (await api.client(IMPORT, content="".join(lines[:31])))["importTranscript"]
    sid = first["session"]["id"]
    ready = asyncio.Event()
    listener = asyncio.create_task(api.client.subscribe(EVENTS, {"s": sid}, 4, ready))
    await ready.wait()
    grown = (await api.client(IMPORT, content="".join(lines)))["importTranscript"]
    events = [p["data"]["sessionEvents"] for p in await listener]
    # The remote compaction's summary, line34 and line35, in seq order; then HEAD's move.
    assert grown["written"] == 3
    assert [(e["type"], e.get("role")) for e in events] == [
        ("NODE_APPENDED", "SUMMARY"), ("NODE_APPENDED", "USER"), ("NODE_APPENDED", "ASSISTANT"),
        ("HEAD_MOVED", None)]
    assert events[2]["nodeId"] == events[3]["headId"] == grown["session"]["headId"]
    assert events[2]["predecessorId"] == events[1]["nodeId"]
    assert events[1]["predecessorId"] == first["session"]["headId"]
