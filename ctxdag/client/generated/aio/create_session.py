from __future__ import annotations

from pydantic import Field

from .base_model import BaseModel
from .fragments import SessionFields


class CreateSession(BaseModel):
    create_session: CreateSessionCreateSession = Field(alias="createSession")


CreateSessionCreateSession = SessionFields
CreateSession.model_rebuild()
