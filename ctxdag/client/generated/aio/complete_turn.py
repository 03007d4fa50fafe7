from __future__ import annotations

from pydantic import Field

from .base_model import BaseModel
from .fragments import TurnFields


class CompleteTurn(BaseModel):
    complete_turn: CompleteTurnCompleteTurn = Field(alias="completeTurn")


CompleteTurnCompleteTurn = TurnFields
CompleteTurn.model_rebuild()
