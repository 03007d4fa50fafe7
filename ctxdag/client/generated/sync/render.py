from __future__ import annotations

from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .fragments import BriefMessageFields


class Render(BaseModel):
    session: Optional[RenderSession]


class RenderSession(BaseModel):
    render: RenderSessionRender


class RenderSessionRender(BaseModel):
    head_id: str = Field(alias="headId")
    node_ids: list[str] = Field(alias="nodeIds")
    summary_id: Optional[str] = Field(alias="summaryId")
    tokens: int
    open_tool_use_ids: list[str] = Field(alias="openToolUseIds")
    nodes: list[RenderSessionRenderNodes]


RenderSessionRenderNodes = BriefMessageFields
Render.model_rebuild()
RenderSession.model_rebuild()
RenderSessionRender.model_rebuild()
