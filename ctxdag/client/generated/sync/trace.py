from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import Purpose
from .fragments import BriefMessageFields


class Trace(BaseModel):
    call: Optional[TraceCall]


class TraceCall(BaseModel):
    id: str
    session_id: str = Field(alias="sessionId")
    purpose: Purpose
    provider: str
    model: Optional[str]
    head_id: Optional[str] = Field(alias="headId")
    output_id: Optional[str] = Field(alias="outputId")
    input_tokens: Optional[int] = Field(alias="inputTokens")
    output_tokens: Optional[int] = Field(alias="outputTokens")
    error: Optional[str]
    error_code: Optional[str] = Field(alias="errorCode")
    created_at: Any = Field(alias="createdAt")
    read_ids: list[str] = Field(alias="readIds")
    tools: Optional[Any]
    reads: list[TraceCallReads]
    replay: TraceCallReplay


TraceCallReads = BriefMessageFields


class TraceCallReplay(BaseModel):
    system: str
    messages: Any
    differs: Optional[bool]
    added_ids: list[str] = Field(alias="addedIds")
    removed_ids: list[str] = Field(alias="removedIds")


Trace.model_rebuild()
TraceCall.model_rebuild()
