from __future__ import annotations

from pydantic import Field

from .base_model import BaseModel
from .fragments import TurnFields


class SendMessage(BaseModel):
    send_message: SendMessageSendMessage = Field(alias="sendMessage")


SendMessageSendMessage = TurnFields
SendMessage.model_rebuild()
