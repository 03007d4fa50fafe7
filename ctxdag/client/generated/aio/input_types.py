from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import ModelErrorCode, ToolChoiceMode


class Base64Input(BaseModel):
    media_type: str = Field(alias="mediaType")
    data: str


class ContentBlockInput(BaseModel):
    """One content block: exactly one of its fields."""

    text: Optional[TextBlockInput] = None
    thinking: Optional[ThinkingBlockInput] = None
    redacted_thinking: Optional[RedactedThinkingBlockInput] = Field(
        alias="redactedThinking", default=None
    )
    tool_use: Optional[ToolUseBlockInput] = Field(alias="toolUse", default=None)
    tool_result: Optional[ToolResultBlockInput] = Field(
        alias="toolResult", default=None
    )
    image: Optional[ImageBlockInput] = None
    document: Optional[DocumentBlockInput] = None


class DocumentBlockInput(BaseModel):
    source: MediaSourceInput
    title: Optional[str] = None


class ImageBlockInput(BaseModel):
    source: MediaSourceInput


class MediaSourceInput(BaseModel):
    """Base64 data (with its media type) or a URL: exactly one."""

    base_64: Optional[Base64Input] = Field(alias="base64", default=None)
    url: Optional[str] = None


class ModelFailureInput(BaseModel):
    """A model call that failed: its code and the provider's message."""

    message: str
    code: ModelErrorCode = ModelErrorCode.MODEL_ERROR


class RedactedThinkingBlockInput(BaseModel):
    data: str


class SessionFilter(BaseModel):
    """Which sessions a list keeps; a field left out keeps all. An imported session's tool and project are its file's (claude-code, pi or codex; the working directory), a native one has no tool and the project it was created with."""

    tool: Optional[str] = None
    "The tool, exactly."
    project: Optional[str] = None
    "The project (working directory), exactly."
    text: Optional[str] = None
    "Text the title holds, whatever its case (a substring, not words)."
    since: Optional[Any] = None
    "Last active at or after this time."
    until: Optional[Any] = None
    "Last active before this time."


class TextBlockInput(BaseModel):
    text: str


class ThinkingBlockInput(BaseModel):
    thinking: str
    signature: str


class ToolChoiceInput(BaseModel):
    mode: ToolChoiceMode
    name: Optional[str] = None
    "With mode TOOL."


class ToolInput(BaseModel):
    """A tool offered to the model."""

    name: str
    input_schema: Any = Field(alias="inputSchema")
    "A JSON Schema object for its input."
    description: Optional[str] = None


class ToolResultBlockInput(BaseModel):
    """`content` (text) or `parts` (text and images), not both."""

    tool_use_id: str = Field(alias="toolUseId")
    content: Optional[str] = None
    parts: Optional[list[ToolResultPartInput]] = None
    is_error: bool = Field(alias="isError", default=False)


class ToolResultPartInput(BaseModel):
    text: Optional[TextBlockInput] = None
    image: Optional[ImageBlockInput] = None


class ToolUseBlockInput(BaseModel):
    id: str
    name: str
    input: Any


class UsageInput(BaseModel):
    """What the provider reported the call cost, in tokens."""

    input_tokens: Optional[int] = Field(alias="inputTokens", default=None)
    output_tokens: Optional[int] = Field(alias="outputTokens", default=None)
    cache_creation_input_tokens: Optional[int] = Field(
        alias="cacheCreationInputTokens", default=None
    )
    cache_read_input_tokens: Optional[int] = Field(
        alias="cacheReadInputTokens", default=None
    )


ContentBlockInput.model_rebuild()
DocumentBlockInput.model_rebuild()
ImageBlockInput.model_rebuild()
MediaSourceInput.model_rebuild()
ToolResultBlockInput.model_rebuild()
ToolResultPartInput.model_rebuild()
