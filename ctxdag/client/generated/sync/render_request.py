from __future__ import annotations

from typing import Any, Optional

from .base_model import BaseModel


class RenderRequest(BaseModel):
    session: Optional[RenderRequestSession]


class RenderRequestSession(BaseModel):
    render: RenderRequestSessionRender


class RenderRequestSessionRender(BaseModel):
    request: Any


RenderRequest.model_rebuild()
RenderRequestSession.model_rebuild()
