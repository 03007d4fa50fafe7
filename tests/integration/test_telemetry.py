"""OpenTelemetry export (docs/guides/telemetry.md): a turn with a tool call, a compaction and an
import, through the service and the real Anthropic SDK against the stub, exported as GenAI
spans: once to the SDK's in-memory exporter, once over OTLP/HTTP to a real Phoenix server
started on loopback, whose own API then shows the spans, grouped per conversation."""
from __future__ import annotations

import io
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from service import telemetry
from service.context.compaction import CompactionStatus
from service.errors import BadInput
from service.transcripts.batch import import_text
from service.turns.requests import Options, Tool
from tests.integration.helpers import KEEP_FOUR, chat, turns
from tests.phoenix import Phoenix
from tests.stubs.anthropic_stub import reply, tool_call

WEATHER = Tool("weather", "Today's weather in a city.",
               {"type": "object", "properties": {"city": {"type": "string"}},
                "required": ["city"]})
TRANSCRIPT = (Path(__file__).parent.parent / "fixtures" / "transcripts" / "claude_code"
              / "session.jsonl")


@dataclass
class Ran:
    session_id: str
    chat_call_ids: list[str]
    summary_call_id: str
    imported_session_id: str
    calls: dict  # call id -> the call as the ledger stored it


async def agent_turn_compaction_and_import(runtime, stub) -> Ran:
    ledger = runtime.ledger
    session = await ledger.sessions.create("weather", "You check the weather.")
    await chat(ledger, session, *turns(8))
    stub.enqueue(tool_call(("toolu_01", "weather", {"city": "Oslo"}), text="Checking."),
                 reply("Oslo is cold."))
    options = Options(tools=(WEATHER,))
    first = await runtime.turns.send_message(session.id, "Weather in Oslo?", options=options)
    assert first.open_tool_use_ids == ["toolu_01"], first.error
    second = await runtime.turns.submit_tool_results(session.id, [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "-3 C"}],
        options=options)
    assert second.error is None, second.error
    stub.enqueue(reply("They talked weather.", 321, 12))
    compaction = await runtime.compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)
    assert compaction.status is CompactionStatus.COMPACTED, compaction.message
    (summary_call,) = [c for c in (await ledger.calls.in_sessions([session.id]))[session.id]
                       if c.purpose.value == "summarize"]
    imported = await import_text(ledger, TRANSCRIPT.read_text(), TRANSCRIPT.name, None)
    call_ids = [first.call_id, second.call_id]
    stored = await ledger.calls.get_many([*call_ids, summary_call.id])
    return Ran(session.id, call_ids, summary_call.id, imported.session_id,
               {c.id: c for c in stored})


def check_spans(ran: Ran, spans: list[dict], tenant: str) -> None:
    """`spans`: name and attributes of each span exported for the tenant."""
    by_call = {s["attributes"].get("ctxdag.call.id"): s for s in spans}
    for call_id in ran.chat_call_ids:
        span = by_call[call_id]["attributes"]
        assert span["gen_ai.operation.name"] == "chat"
        assert span["gen_ai.provider.name"] == span["gen_ai.system"] == "anthropic"
        assert span["gen_ai.request.model"] == "claude-stub"
        assert span["gen_ai.response.model"] == "claude-stub"
        assert span["gen_ai.conversation.id"] == ran.session_id
        assert span["ctxdag.session.id"] == ran.session_id
        assert span["ctxdag.tenant"] == tenant
        call = ran.calls[call_id]
        assert (span["gen_ai.usage.input_tokens"], span["gen_ai.usage.output_tokens"],
                span.get("gen_ai.usage.cache_read.input_tokens"),
                span.get("gen_ai.usage.cache_creation.input_tokens")) == (
            call.input_tokens, call.output_tokens, call.cache_read_input_tokens,
            call.cache_creation_input_tokens)
        assert span["gen_ai.usage.output_tokens"] > 0
        assert tuple(span["ctxdag.read_node_ids"]) == call.read_ids
        assert "gen_ai.input.messages" not in span  # capturing is off by default
    tool_use, answered = (by_call[i]["attributes"] for i in ran.chat_call_ids)
    assert list(tool_use["gen_ai.response.finish_reasons"]) == ["tool_use"]
    assert list(answered["gen_ai.response.finish_reasons"]) == ["end_turn"]
    summary = by_call[ran.summary_call_id]
    assert summary["name"] == "chat claude-stub"
    assert summary["attributes"]["ctxdag.call.purpose"] == "summarize"
    assert summary["attributes"]["gen_ai.usage.input_tokens"] == 321
    assert (tuple(summary["attributes"]["ctxdag.read_node_ids"])
            == ran.calls[ran.summary_call_id].read_ids)
    counts = [s for s in spans
              if s["attributes"].get("gen_ai.operation.name") == "count_tokens"]
    assert len(counts) == 2  # the budget check before each of the turn's two model calls
    for count in counts:
        assert count["attributes"]["gen_ai.conversation.id"] == ran.session_id
        assert count["attributes"]["ctxdag.counted_tokens"] > 0
    # Each count read the prompt its call then sent.
    assert {tuple(c["attributes"]["ctxdag.read_node_ids"]) for c in counts} == {
        ran.calls[i].read_ids for i in ran.chat_call_ids}
    (imported,) = [s for s in spans if s["name"] == "import_transcript"]
    assert imported["attributes"]["gen_ai.conversation.id"] == ran.imported_session_id
    assert imported["attributes"]["ctxdag.import.format"] == "claude-code"
    assert imported["attributes"]["ctxdag.import.written"] > 0
    assert len(spans) == 2 + 1 + 2 + 1


@pytest.fixture
def in_memory():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    telemetry.use(None)


async def test_a_turn_a_compaction_and_an_import_export_genai_spans(
        anthropic_runtime, stub, tenant, in_memory):
    runtime = anthropic_runtime()
    provider, exporter = in_memory
    telemetry.use(provider)
    ran = await agent_turn_compaction_and_import(runtime, stub)
    check_spans(ran, [{"name": s.name, "attributes": dict(s.attributes)}
                      for s in exporter.get_finished_spans()], tenant)


async def test_without_an_endpoint_nothing_is_exported(anthropic_runtime, stub):
    anthropic_runtime()
    assert not telemetry.enabled()


async def test_a_call_a_runtime_records_itself_is_exported_with_what_it_read(
        ledger, turns, tenant, in_memory):
    """recordCall, with and without a reply: one chat span per recorded call, named by its
    model, its read ids the ones stored; a refused one (a read of another session) none."""
    provider, exporter = in_memory
    telemetry.use(provider, capture_messages=True)
    session = await ledger.sessions.create("external")
    (user,) = await chat(ledger, session, "Summarize the ledger.")
    quiet = await turns.record_call(session.id, [session.root_id, user.id], "their-model",
                                    usage={"input_tokens": 40, "output_tokens": 0})
    answered = await turns.record_call(session.id, [session.root_id, user.id], "their-model",
                                       output="It records every call.",
                                       usage={"input_tokens": 41, "output_tokens": 5})
    with pytest.raises(BadInput):
        await turns.record_call(session.id, [session.root_id, "nod_missing"], "their-model")
    spans = {s.attributes["ctxdag.call.id"]: s for s in exporter.get_finished_spans()}
    assert set(spans) == {quiet.id, answered.id}
    for call in (quiet, answered):
        span = spans[call.id]
        assert span.name == "chat their-model"
        attributes = span.attributes
        assert attributes["ctxdag.call.purpose"] == "external"
        assert attributes["gen_ai.provider.name"] == "external"
        assert attributes["gen_ai.conversation.id"] == session.id
        assert attributes["ctxdag.tenant"] == tenant
        assert tuple(attributes["ctxdag.read_node_ids"]) == call.read_ids \
            == (session.root_id, user.id)
        assert attributes["gen_ai.usage.input_tokens"] == call.input_tokens
        assert "gen_ai.input.messages" not in attributes  # the prompt is not read back
    assert "gen_ai.output.messages" not in spans[quiet.id].attributes
    assert "It records every call." in spans[answered.id].attributes["gen_ai.output.messages"]


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    server = Phoenix(tmp_path_factory.mktemp("phoenix"))
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


async def test_the_spans_reach_a_real_phoenix_grouped_per_conversation(
        anthropic_runtime, stub, tenant, phoenix):
    runtime = anthropic_runtime(OTEL_EXPORTER_OTLP_ENDPOINT=phoenix.url)
    try:
        assert telemetry.enabled()
        ran = await agent_turn_compaction_and_import(runtime, stub)
        assert telemetry.flush()
        spans = arrived(phoenix, tenant, 6)
    finally:
        telemetry.configure(None)
    check_spans(ran, spans, tenant)
    assert {s["span_kind"] for s in spans if "ctxdag.call.id" in s["attributes"]} == {"LLM"}
    sessions = phoenix.sessions()
    # Phoenix groups the turn's two calls, its two token counts and the summary under the
    # conversation's id, and the import under the imported one's.
    assert sessions[ran.session_id] == 5
    assert sessions[ran.imported_session_id] == 1


def arrived(phoenix: Phoenix, tenant: str, expected: int) -> list[dict]:
    """The tenant's spans once Phoenix has stored `expected` of them (it ingests in the
    background after accepting them)."""
    deadline = time.monotonic() + 60
    while True:
        spans = [s for s in phoenix.spans()
                 if s["attributes"].get("ctxdag.tenant") == tenant]
        if len(spans) >= expected or time.monotonic() > deadline:
            return spans
        time.sleep(0.5)


async def test_a_large_file_imported_in_parts_is_exported_as_one_import(
        ledger, in_memory, tmp_path, monkeypatch):
    from service.store import transcript_parts
    from service.transcripts import batch, streamed

    monkeypatch.setattr(streamed, "STREAM_FROM_BYTES", 0)
    monkeypatch.setattr(transcript_parts, "PART_NODES", 2)
    provider, exporter = in_memory
    telemetry.use(provider)
    file = tmp_path / TRANSCRIPT.name
    file.write_text(TRANSCRIPT.read_text())
    status = await batch.import_paths(ledger, [str(file)], None, False, None,
                                      lambda f: Path(f).read_text(), out=io.StringIO(),
                                      err=io.StringIO())
    assert status == 0
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "import_transcript"]
    (session,) = (await ledger.sessions.list(first=10)).items
    assert span.attributes["gen_ai.conversation.id"] == session.id
    assert span.attributes["ctxdag.import.format"] == "claude-code"
    assert span.attributes["ctxdag.import.written"] == session.node_count
