from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import Field

from .base_model import BaseModel
from .enums import Role


class BriefMessageFields(BaseModel):
    id: str
    role: Role
    content: str
    tokens: int
    tool_use_ids: list[str] = Field(alias="toolUseIds")
    blocks: list[
        Annotated[
            Union[
                BriefMessageFieldsBlocksTextBlock,
                BriefMessageFieldsBlocksThinkingBlock,
                BriefMessageFieldsBlocksRedactedThinkingBlock,
                BriefMessageFieldsBlocksToolUseBlock,
                BriefMessageFieldsBlocksToolResultBlock,
                BriefMessageFieldsBlocksImageBlock,
                BriefMessageFieldsBlocksDocumentBlock,
            ],
            Field(discriminator="typename__"),
        ]
    ]


class BriefMessageFieldsBlocksTextBlock(BaseModel):
    typename__: Literal["TextBlock"] = Field(alias="__typename")


class BriefMessageFieldsBlocksThinkingBlock(BaseModel):
    typename__: Literal["ThinkingBlock"] = Field(alias="__typename")


class BriefMessageFieldsBlocksRedactedThinkingBlock(BaseModel):
    typename__: Literal["RedactedThinkingBlock"] = Field(alias="__typename")


class BriefMessageFieldsBlocksToolUseBlock(BaseModel):
    typename__: Literal["ToolUseBlock"] = Field(alias="__typename")
    id: str
    name: str
    input: Any


class BriefMessageFieldsBlocksToolResultBlock(BaseModel):
    typename__: Literal["ToolResultBlock"] = Field(alias="__typename")
    tool_use_id: str = Field(alias="toolUseId")
    is_error: bool = Field(alias="isError")


class BriefMessageFieldsBlocksImageBlock(BaseModel):
    typename__: Literal["ImageBlock"] = Field(alias="__typename")


class BriefMessageFieldsBlocksDocumentBlock(BaseModel):
    typename__: Literal["DocumentBlock"] = Field(alias="__typename")


class MessageFields(BaseModel):
    id: str
    session_id: str = Field(alias="sessionId")
    role: Role
    content: str
    predecessor_id: Optional[str] = Field(alias="predecessorId")
    created_at: Any = Field(alias="createdAt")
    tokens: int
    tool_use_ids: list[str] = Field(alias="toolUseIds")
    metadata: Any
    blocks: list[
        Annotated[
            Union[
                MessageFieldsBlocksTextBlock,
                MessageFieldsBlocksThinkingBlock,
                MessageFieldsBlocksRedactedThinkingBlock,
                MessageFieldsBlocksToolUseBlock,
                MessageFieldsBlocksToolResultBlock,
                MessageFieldsBlocksImageBlock,
                MessageFieldsBlocksDocumentBlock,
            ],
            Field(discriminator="typename__"),
        ]
    ]


class MessageFieldsBlocksTextBlock(BaseModel):
    typename__: Literal["TextBlock"] = Field(alias="__typename")
    text: str


class MessageFieldsBlocksThinkingBlock(BaseModel):
    typename__: Literal["ThinkingBlock"] = Field(alias="__typename")
    thinking: str
    signature: str


class MessageFieldsBlocksRedactedThinkingBlock(BaseModel):
    typename__: Literal["RedactedThinkingBlock"] = Field(alias="__typename")


class MessageFieldsBlocksToolUseBlock(BaseModel):
    typename__: Literal["ToolUseBlock"] = Field(alias="__typename")
    id: str
    name: str
    input: Any


class MessageFieldsBlocksToolResultBlock(BaseModel):
    typename__: Literal["ToolResultBlock"] = Field(alias="__typename")
    tool_use_id: str = Field(alias="toolUseId")
    is_error: bool = Field(alias="isError")
    content: list[
        Annotated[
            Union[
                MessageFieldsBlocksToolResultBlockContentTextBlock,
                MessageFieldsBlocksToolResultBlockContentImageBlock,
            ],
            Field(discriminator="typename__"),
        ]
    ]


class MessageFieldsBlocksToolResultBlockContentTextBlock(BaseModel):
    typename__: Literal["TextBlock"] = Field(alias="__typename")
    text: str


class MessageFieldsBlocksToolResultBlockContentImageBlock(BaseModel):
    typename__: Literal["ImageBlock"] = Field(alias="__typename")


class MessageFieldsBlocksImageBlock(BaseModel):
    typename__: Literal["ImageBlock"] = Field(alias="__typename")


class MessageFieldsBlocksDocumentBlock(BaseModel):
    typename__: Literal["DocumentBlock"] = Field(alias="__typename")


class SessionFields(BaseModel):
    id: str
    title: Optional[str]
    project: Optional[str]
    tool: Optional[str]
    head_id: str = Field(alias="headId")
    root_id: str = Field(alias="rootId")
    node_count: int = Field(alias="nodeCount")
    summary_strategy: str = Field(alias="summaryStrategy")
    created_at: Any = Field(alias="createdAt")
    last_activity_at: Any = Field(alias="lastActivityAt")


class TurnFields(BaseModel):
    user_node: Optional[TurnFieldsUserNode] = Field(alias="userNode")
    reply: Optional[TurnFieldsReply]
    call_id: Optional[str] = Field(alias="callId")
    error: Optional[str]
    error_code: Optional[str] = Field(alias="errorCode")
    open_tool_use_ids: list[str] = Field(alias="openToolUseIds")
    head_moved: Optional[bool] = Field(alias="headMoved")
    replayed: bool


class TurnFieldsUserNode(MessageFields):
    pass


class TurnFieldsReply(MessageFields):
    pass


BriefMessageFields.model_rebuild()
MessageFields.model_rebuild()
SessionFields.model_rebuild()
TurnFields.model_rebuild()
