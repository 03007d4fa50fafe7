"""The spans: each written after the fact, from what the caller recorded (its start and
end times included), so no span is open across an await and nothing is read again."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, Sequence

from ..model.models import CallRecord, Node
from . import genai
from .export import active

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def export_call(tenant: str, session_id: str, record: CallRecord, *,
                request_model: str | None = None, finish_reason: str | None = None,
                prompt: Sequence[Node] = (), reply: Node | str | None = None) -> None:
    """A model call as a GenAI `chat` span; its prompt and reply as messages only when
    capturing them is on (CTXDAG_OTEL_CAPTURE_MESSAGES)."""
    export = active()
    if export is None:
        return
    attributes = genai.call_attributes(tenant, session_id, record,
                                       request_model=request_model,
                                       finish_reason=finish_reason)
    if export.capture_messages:
        if prompt:
            attributes["gen_ai.input.messages"] = genai.input_messages(prompt)
        if reply is not None:
            attributes["gen_ai.output.messages"] = genai.output_messages(reply, finish_reason)
    _emit(export, genai.span_name(genai.CHAT, attributes.get("gen_ai.request.model")),
          attributes, record.started_at, record.finished_at, record.error_message)


def export_count(tenant: str, session_id: str, provider: str, model: str | None,
                 prompt: Sequence[Node], started: datetime, finished: datetime, *,
                 tokens: int | None = None, error: Any = None) -> None:
    """A provider's count of the tokens of `prompt` (the nodes it read): a
    `count_tokens` span."""
    export = active()
    if export is None:
        return
    attributes = {**genai.model_attributes(genai.COUNT_TOKENS, provider, model),
                  **genai.session_attributes(tenant, session_id),
                  "ctxdag.read_node_ids": [n.id for n in prompt]}
    if tokens is not None:
        attributes["ctxdag.counted_tokens"] = tokens
    if error is not None:
        attributes["error.type"] = getattr(error, "code", type(error).__name__)
    _emit(export, genai.span_name(genai.COUNT_TOKENS, model), attributes, started, finished,
          None if error is None else str(getattr(error, "message", error)))


def export_import(tenant: str, session_id: str | None, started: datetime,
                  finished: datetime, *, fields: dict[str, Any], error: Any = None) -> None:
    """A transcript import (an `import_transcript` span; not a model call)."""
    export = active()
    if export is None:
        return
    attributes = {"ctxdag.tenant": tenant, **{f"ctxdag.import.{k}": v for k, v in fields.items()
                                              if v is not None}}
    if session_id is not None:
        attributes.update(genai.session_attributes(tenant, session_id))
    if error is not None:
        attributes["error.type"] = getattr(error, "code", type(error).__name__)
    _emit(export, "import_transcript", attributes, started, finished,
          None if error is None else str(getattr(error, "message", error)))


def _emit(export: Any, name: str, attributes: dict[str, Any], started: datetime,
          finished: datetime, error_message: str | None) -> None:
    from opentelemetry.trace import SpanKind, Status, StatusCode

    span = export.tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes,
                                    start_time=_nanos(started))
    if "error.type" in attributes:
        span.set_status(Status(StatusCode.ERROR, error_message))
    span.end(end_time=_nanos(finished))


def _nanos(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1000
