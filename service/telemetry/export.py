"""Where spans go: one tracer provider of ctxdag's own (the process-wide OpenTelemetry
provider is left to the embedding application), exporting over OTLP/HTTP."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCOPE = "ctxdag"


@dataclass(frozen=True)
class Export:
    provider: Any  # opentelemetry.sdk.trace.TracerProvider
    tracer: Any
    capture_messages: bool


_export: Export | None = None
_owned: Any | None = None  # the provider `configure` built (an OTLP exporter's)


def active() -> Export | None:
    """The export in force; None when telemetry is off."""
    return _export


def enabled() -> bool:
    return _export is not None


def configure(endpoint: str | None, *, capture_messages: bool = False) -> None:
    """Exports to the OTLP/HTTP collector at `endpoint` (its base URL, as in
    OTEL_EXPORTER_OTLP_ENDPOINT: spans go to <endpoint>/v1/traces); None turns export off.
    A second call with the same endpoint keeps the provider (and its unsent spans)."""
    global _owned
    if _owned is not None and (endpoint is None or _owned.ctxdag_endpoint != endpoint):
        _owned.shutdown()  # sends what it holds
        _owned = None
    if endpoint is None:
        use(None)
        return
    if _owned is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        _owned = TracerProvider(resource=Resource.create({"service.name": "ctxdag"}))
        _owned.add_span_processor(BatchSpanProcessor(
            OTLPSpanExporter(endpoint=endpoint.rstrip("/") + "/v1/traces")))
        _owned.ctxdag_endpoint = endpoint
    use(_owned, capture_messages=capture_messages)


def use(provider: Any | None, *, capture_messages: bool = False) -> None:
    """Exports through `provider` (a TracerProvider the caller owns and shuts down; tests
    give one with an in-memory exporter); None turns export off."""
    global _export
    _export = None if provider is None else Export(provider, provider.get_tracer(SCOPE),
                                                   capture_messages)


def flush(timeout_millis: int = 30_000) -> bool:
    """Sends the spans not sent yet; whether all went (True when export is off)."""
    return True if _export is None else _export.provider.force_flush(timeout_millis)
