from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from .base_model import BaseModel
from .fragments import MessageFields


class BeginTurn(BaseModel):
    begin_turn: BeginTurnBeginTurn = Field(alias="beginTurn")


class BeginTurnBeginTurn(BaseModel):
    id: str
    session_id: str = Field(alias="sessionId")
    user_node: Optional[BeginTurnBeginTurnUserNode] = Field(alias="userNode")
    head_id: str = Field(alias="headId")
    read_ids: list[str] = Field(alias="readIds")
    tools_sha_256: Optional[str] = Field(alias="toolsSha256")
    fingerprint: str
    expires_at: Any = Field(alias="expiresAt")
    request: Any


BeginTurnBeginTurnUserNode = MessageFields
BeginTurn.model_rebuild()
BeginTurnBeginTurn.model_rebuild()
