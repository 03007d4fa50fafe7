"""The GenAI attribute mapping of an exported call, through the SDK's in-memory exporter."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from service import telemetry
from service.model.kinds import Purpose
from service.model.models import CallRecord

STARTED = datetime(2026, 5, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    def install(capture_messages: bool = False) -> InMemorySpanExporter:
        telemetry.use(provider, capture_messages=capture_messages)
        return exporter

    yield install
    telemetry.use(None)


def a_call(**fields) -> CallRecord:
    return CallRecord(Purpose.CHAT, "anthropic", "claude-x-20260101", ("nod_a", "nod_b"),
                      STARTED, STARTED + timedelta(milliseconds=1500), head_id="nod_b",
                      input_tokens=120, output_tokens=7, cache_read_input_tokens=100,
                      cache_creation_input_tokens=20, id="cal_1", **fields)


def test_a_chat_call_maps_to_genai_attributes_and_ctxdag_reads(spans):
    exporter = spans()
    telemetry.export_call("acme", "ses_1", a_call(), request_model="claude-x",
                          finish_reason="tool_use", prompt=(), reply="hi")
    (span,) = exporter.get_finished_spans()
    assert span.name == "chat claude-x"
    assert span.kind is SpanKind.CLIENT
    assert span.start_time == 1777636800123456000
    assert span.end_time - span.start_time == 1_500_000_000
    assert dict(span.attributes) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
        "gen_ai.system": "anthropic", "gen_ai.request.model": "claude-x",
        "gen_ai.response.model": "claude-x-20260101", "openinference.span.kind": "LLM",
        "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 7,
        "gen_ai.usage.cache_read.input_tokens": 100,
        "gen_ai.usage.cache_creation.input_tokens": 20,
        "gen_ai.response.finish_reasons": ("tool_use",),
        "gen_ai.conversation.id": "ses_1", "session.id": "ses_1",
        "ctxdag.session.id": "ses_1", "ctxdag.tenant": "acme", "ctxdag.call.id": "cal_1",
        "ctxdag.call.purpose": "chat", "ctxdag.head_id": "nod_b",
        "ctxdag.read_node_ids": ("nod_a", "nod_b"),
    }
    assert span.status.status_code is StatusCode.UNSET


def test_messages_are_exported_only_when_capturing_is_on(spans):
    from service.model.models import Node, Role

    node = Node(id="nod_a", session_id="ses_1", role=Role.USER, content="Weather?",
                created_at=STARTED, tokens=2, metadata={}, seq=1, depth=1,
                predecessor_id="nod_root", caller_id=None, side_branch=False,
                deleted_at=None)
    exporter = spans()
    telemetry.export_call("acme", "ses_1", a_call(), prompt=[node], reply="Sunny.")
    assert not any(k.startswith("gen_ai.input") or k.startswith("gen_ai.output")
                   for k in exporter.get_finished_spans()[0].attributes)
    exporter.clear()
    spans(capture_messages=True)
    telemetry.export_call("acme", "ses_1", a_call(), prompt=[node], reply="Sunny.",
                          finish_reason="end_turn")
    attributes = exporter.get_finished_spans()[0].attributes
    assert json.loads(attributes["gen_ai.input.messages"]) == [
        {"role": "user", "parts": [{"type": "text", "content": "Weather?"}]}]
    assert json.loads(attributes["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}],
         "finish_reason": "end_turn"}]


def test_a_call_a_runtime_recorded_itself_maps_like_the_services_own(spans):
    """recordCall's call (Purpose.EXTERNAL, provider `external`, one instant: the runtime
    reports no times) is a chat span under the same conventions, with the nodes it read and,
    when capturing, its reply; it has no head and no finish reason."""
    from service.model.models import Node, Role

    reply = Node(id="nod_r", session_id="ses_1", role=Role.ASSISTANT, content="Done.",
                 created_at=STARTED, tokens=2, metadata={}, seq=3, depth=3,
                 predecessor_id="nod_b", caller_id=None, side_branch=False, deleted_at=None)
    external = CallRecord(Purpose.EXTERNAL, "external", "gpt-x", ("nod_a", "nod_b"), STARTED,
                          STARTED, input_tokens=50, output_tokens=3, id="cal_ext")
    exporter = spans(capture_messages=True)
    telemetry.export_call("acme", "ses_1", external, request_model="gpt-x", reply=reply)
    (span,) = exporter.get_finished_spans()
    assert span.name == "chat gpt-x"
    assert span.kind is SpanKind.CLIENT
    assert span.start_time == span.end_time == 1777636800123456000
    attributes = dict(span.attributes)
    assert json.loads(attributes.pop("gen_ai.output.messages")) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "Done."}]}]
    assert attributes == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "external",
        "gen_ai.system": "external", "gen_ai.request.model": "gpt-x",
        "gen_ai.response.model": "gpt-x", "openinference.span.kind": "LLM",
        "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 3,
        "gen_ai.conversation.id": "ses_1", "session.id": "ses_1",
        "ctxdag.session.id": "ses_1", "ctxdag.tenant": "acme", "ctxdag.call.id": "cal_ext",
        "ctxdag.call.purpose": "external", "ctxdag.read_node_ids": ("nod_a", "nod_b"),
    }
    assert span.status.status_code is StatusCode.UNSET


def test_a_failed_call_is_an_error_span(spans):
    exporter = spans()
    telemetry.export_call("acme", "ses_1", a_call(error_code="MODEL_OVERLOADED",
                                                  error_message="overloaded"))
    (span,) = exporter.get_finished_spans()
    assert span.attributes["error.type"] == "MODEL_OVERLOADED"
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "overloaded"


def test_with_export_off_nothing_is_exported(spans):
    exporter = spans()
    telemetry.use(None)
    assert not telemetry.enabled()
    telemetry.export_call("acme", "ses_1", a_call())
    telemetry.export_count("acme", "ses_1", "anthropic", "m", [], STARTED, STARTED)
    assert exporter.get_finished_spans() == ()
    assert telemetry.flush()


def test_the_settings_read_the_otlp_endpoint_and_the_capture_switch():
    from service.config import Settings

    assert Settings.from_env({}).otel_endpoint is None
    assert Settings.from_env({}).otel_capture_messages is False
    on = Settings.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
                            "CTXDAG_OTEL_CAPTURE_MESSAGES": "true"})
    assert (on.otel_endpoint, on.otel_capture_messages) == ("http://127.0.0.1:4318", True)


def test_with_no_endpoint_opentelemetry_is_not_even_imported():
    """The no-op path: a runtime assembled without OTEL_EXPORTER_OTLP_ENDPOINT loads no
    OpenTelemetry module (a fresh interpreter, so this test process's imports don't count)."""
    import subprocess
    import sys

    code = ("import sys; from service.config import Settings; from service.runtime import "
            "Runtime; from service import telemetry; "
            "telemetry.configure(Settings.from_env({}).otel_endpoint); "
            "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={"PATH": ""}).stdout
    assert out.strip() == "[]"
