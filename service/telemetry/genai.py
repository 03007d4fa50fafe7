"""A recorded model call as OpenTelemetry GenAI semantic-convention attributes, plus
ctxdag's own (`ctxdag.*`) and the `session.id` Phoenix groups conversations by."""
from __future__ import annotations

import json
from typing import Any, Sequence

from ..model.blocks import Text, ToolResult, ToolUse
from ..model.models import CallRecord, Node

CHAT = "chat"
COUNT_TOKENS = "count_tokens"


def session_attributes(tenant: str, session_id: str) -> dict[str, Any]:
    return {"gen_ai.conversation.id": session_id, "session.id": session_id,
            "ctxdag.session.id": session_id, "ctxdag.tenant": tenant}


def call_attributes(tenant: str, session_id: str, record: CallRecord, *,
                    request_model: str | None, finish_reason: str | None) -> dict[str, Any]:
    usage = {"gen_ai.usage.input_tokens": record.input_tokens,
             "gen_ai.usage.output_tokens": record.output_tokens,
             "gen_ai.usage.cache_read.input_tokens": record.cache_read_input_tokens,
             "gen_ai.usage.cache_creation.input_tokens": record.cache_creation_input_tokens}
    return _present({
        **model_attributes(CHAT, record.provider, request_model or record.model),
        "gen_ai.response.model": record.model,
        **usage,
        "gen_ai.response.finish_reasons": [finish_reason] if finish_reason else None,
        "error.type": record.error_code,
        **session_attributes(tenant, session_id),
        "ctxdag.call.id": record.id,
        "ctxdag.call.purpose": record.purpose.value,
        "ctxdag.head_id": record.head_id,
        "ctxdag.read_node_ids": list(record.read_ids),
    })


def model_attributes(operation: str, provider: str, model: str | None) -> dict[str, Any]:
    return _present({"gen_ai.operation.name": operation, "gen_ai.provider.name": provider,
                     "gen_ai.system": provider, "gen_ai.request.model": model,
                     "openinference.span.kind": "LLM"})


def span_name(operation: str, model: str | None) -> str:
    return f"{operation} {model}" if model else operation


def input_messages(prompt: Sequence[Node]) -> str:
    """The prompt in the GenAI conventions' message shape, as JSON text."""
    return json.dumps([message(n.role.value, n) for n in prompt], ensure_ascii=False)


def output_messages(reply: Node | str, finish_reason: str | None) -> str:
    out = message("assistant", reply)
    return json.dumps([{**out, "finish_reason": finish_reason}] if finish_reason else [out],
                      ensure_ascii=False)


def message(role: str, content: Node | str) -> dict[str, Any]:
    if isinstance(content, str):
        return {"role": role, "parts": [{"type": "text", "content": content}]}
    return {"role": role, "parts": [_part(b) for b in content.blocks]}


def _part(block: Any) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "content": block.text}
    if isinstance(block, ToolUse):
        return {"type": "tool_call", "id": block.id, "name": block.name,
                "arguments": dict(block.input)}
    if isinstance(block, ToolResult):
        return {"type": "tool_call_response", "id": block.tool_use_id,
                "response": [c.text if isinstance(c, Text) else c.kind for c in block.content]}
    return {"type": block.kind}  # thinking, media: named, not carried


def _present(attributes: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in attributes.items() if v is not None}
