from __future__ import annotations

from typing import Optional

from .base_model import BaseModel
from .fragments import SessionFields


class GetSession(BaseModel):
    session: Optional[GetSessionSession]


GetSessionSession = SessionFields
GetSession.model_rebuild()
