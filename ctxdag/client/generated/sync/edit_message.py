from __future__ import annotations

from pydantic import Field

from .base_model import BaseModel
from .fragments import TurnFields


class EditMessage(BaseModel):
    edit_message: EditMessageEditMessage = Field(alias="editMessage")


EditMessageEditMessage = TurnFields
EditMessage.model_rebuild()
