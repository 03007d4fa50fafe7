from __future__ import annotations

from typing import Any, Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import ToolChoiceMode


class Base64Input(BaseModel):
    media_type: str = Field(alias="mediaType")
    data: str


class ImageBlockInput(BaseModel):
    source: MediaSourceInput


class MediaSourceInput(BaseModel):
    """Base64 data (with its media type) or a URL: exactly one."""

    base_64: Optional[Base64Input] = Field(alias="base64", default=None)
    url: Optional[str] = None


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


ImageBlockInput.model_rebuild()
MediaSourceInput.model_rebuild()
ToolResultBlockInput.model_rebuild()
ToolResultPartInput.model_rebuild()
