"""Content blocks in GraphQL: the `ContentBlock` union a message reads as, the strict
`ContentBlockInput` (@oneOf) a client writes with, and provider requests of a render.

Thin, like the rest of api/: an input is turned into the blocks' JSON shape and checked
by service/model/blocks.py (the one place with the rules); an output restates a stored
block; a request is service/turns/requests.py's.
"""
from __future__ import annotations

from dataclasses import replace
from enum import Enum
from typing import Annotated, Any, Optional, Sequence, Union

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from ..model import blocks
from ..store import Node, Rendered
from ..turns import requests


# --------------------------------------------------------------------------- output


@strawberry.type(description="Text.")
class TextBlock:
    text: str


@strawberry.type(description="The model's reasoning, with the signature the provider checks "
                             "when it is sent back (kept verbatim).")
class ThinkingBlock:
    thinking: str
    signature: str


@strawberry.type(description="Reasoning the provider encrypted; sent back as it is.")
class RedactedThinkingBlock:
    data: str


@strawberry.type(description="A tool call the model made; the next message answers it.")
class ToolUseBlock:
    id: str
    name: str
    input: JSON


@strawberry.type(description="An image or document: stored data (by content hash) or a URL.")
class MediaSource:
    media_type: Optional[str] = strawberry.field(default=None, description="Null for a URL.")
    sha256: Optional[str] = strawberry.field(default=None,
                                             description="The stored data's content hash.")
    bytes: Optional[int] = None
    width: Optional[int] = strawberry.field(default=None, description="An image's pixels.")
    height: Optional[int] = None
    pages: Optional[int] = strawberry.field(default=None, description="A PDF's pages.")
    url: Optional[str] = None

    @strawberry.field(description="The stored data, base64 (null for a URL). Loaded only "
                                  "when asked.")
    async def data(self, info: Info) -> Optional[str]:
        if self.sha256 is None:
            return None
        return await info.context.loaders.media.load(self.sha256)


@strawberry.type(description="An image.")
class ImageBlock:
    source: MediaSource


@strawberry.type(description="A document (PDF or plain text).")
class DocumentBlock:
    source: MediaSource
    title: Optional[str] = None


ToolResultPart = Annotated[Union[TextBlock, ImageBlock], strawberry.union("ToolResultPart")]


@strawberry.type(description="The answer to a tool use of the message right before.")
class ToolResultBlock:
    tool_use_id: str
    content: list[ToolResultPart]
    is_error: bool


ContentBlock = Annotated[
    Union[TextBlock, ThinkingBlock, RedactedThinkingBlock, ToolUseBlock, ToolResultBlock,
          ImageBlock, DocumentBlock],
    strawberry.union("ContentBlock", description="One block of a message's content.")]


def block_out(block: blocks.Block) -> Any:
    if isinstance(block, blocks.Text):
        return TextBlock(text=block.text)
    if isinstance(block, blocks.Thinking):
        return ThinkingBlock(thinking=block.thinking, signature=block.signature)
    if isinstance(block, blocks.RedactedThinking):
        return RedactedThinkingBlock(data=block.data)
    if isinstance(block, blocks.ToolUse):
        return ToolUseBlock(id=block.id, name=block.name, input=dict(block.input))
    if isinstance(block, blocks.ToolResult):
        return ToolResultBlock(tool_use_id=block.tool_use_id, is_error=block.is_error,
                               content=[block_out(part) for part in block.content])
    source = _source_out(block.source)
    if isinstance(block, blocks.Image):
        return ImageBlock(source=source)
    return DocumentBlock(source=source, title=block.title)


def _source_out(source: blocks.Source) -> MediaSource:
    if isinstance(source, blocks.UrlSource):
        return MediaSource(url=source.url)
    return MediaSource(media_type=source.media_type, sha256=source.sha256, bytes=source.bytes,
                       width=source.width, height=source.height, pages=source.pages)


# --------------------------------------------------------------------------- input


@strawberry.input
class TextBlockInput:
    text: str


@strawberry.input
class ThinkingBlockInput:
    thinking: str
    signature: str


@strawberry.input
class RedactedThinkingBlockInput:
    data: str


@strawberry.input
class ToolUseBlockInput:
    id: str
    name: str
    input: JSON


@strawberry.input(description="Base64 data (with its media type) or a URL: exactly one.",
                  one_of=True)
class MediaSourceInput:
    base64: Optional["Base64Input"] = strawberry.UNSET
    url: Optional[str] = strawberry.UNSET


@strawberry.input
class Base64Input:
    media_type: str
    data: str


@strawberry.input
class ImageBlockInput:
    source: MediaSourceInput


@strawberry.input
class DocumentBlockInput:
    source: MediaSourceInput
    title: Optional[str] = None


@strawberry.input(one_of=True)
class ToolResultPartInput:
    text: Optional[TextBlockInput] = strawberry.UNSET
    image: Optional[ImageBlockInput] = strawberry.UNSET


@strawberry.input(description="`content` (text) or `parts` (text and images), not both.")
class ToolResultBlockInput:
    tool_use_id: str
    content: Optional[str] = None
    parts: Optional[list[ToolResultPartInput]] = None
    is_error: bool = False


@strawberry.input(description="One content block: exactly one of its fields.", one_of=True)
class ContentBlockInput:
    text: Optional[TextBlockInput] = strawberry.UNSET
    thinking: Optional[ThinkingBlockInput] = strawberry.UNSET
    redacted_thinking: Optional[RedactedThinkingBlockInput] = strawberry.UNSET
    tool_use: Optional[ToolUseBlockInput] = strawberry.UNSET
    tool_result: Optional[ToolResultBlockInput] = strawberry.UNSET
    image: Optional[ImageBlockInput] = strawberry.UNSET
    document: Optional[DocumentBlockInput] = strawberry.UNSET


def blocks_in(given: Optional[list[ContentBlockInput]]) -> Optional[list[dict[str, Any]]]:
    """The input in the blocks' JSON shape, for service/model/blocks.py to check."""
    if given is None:
        return None
    return [_block_in(item) for item in given]


def _set(value: Any) -> bool:
    return value is not strawberry.UNSET and value is not None


def _block_in(item: Any) -> dict[str, Any]:
    if _set(getattr(item, "text", None)):
        return {"type": "text", "text": item.text.text}
    if _set(getattr(item, "thinking", None)):
        return {"type": "thinking", "thinking": item.thinking.thinking,
                "signature": item.thinking.signature}
    if _set(getattr(item, "redacted_thinking", None)):
        return {"type": "redacted_thinking", "data": item.redacted_thinking.data}
    if _set(getattr(item, "tool_use", None)):
        use = item.tool_use
        return {"type": "tool_use", "id": use.id, "name": use.name, "input": use.input}
    if _set(getattr(item, "tool_result", None)):
        result = item.tool_result
        if result.content is not None and result.parts is not None:
            from ..errors import BadInput

            raise BadInput(f"tool result {result.tool_use_id}: content or parts, not both")
        content: Any = (result.content if result.parts is None
                        else [_block_in(part) for part in result.parts])
        return {"type": "tool_result", "tool_use_id": result.tool_use_id,
                "content": "" if content is None else content, "is_error": result.is_error}
    if _set(getattr(item, "image", None)):
        return {"type": "image", "source": _source_in(item.image.source)}
    document = item.document
    shaped = {"type": "document", "source": _source_in(document.source)}
    if document.title is not None:
        shaped["title"] = document.title
    return shaped


def _source_in(source: MediaSourceInput) -> dict[str, Any]:
    if _set(source.url):
        return {"type": "url", "url": source.url}
    return {"type": "base64", "media_type": source.base64.media_type,
            "data": source.base64.data}


# --------------------------------------------------------------------------- requests


@strawberry.enum(description="A provider's request format.")
class RequestFormat(Enum):
    ANTHROPIC_MESSAGES = "anthropic_messages"
    OPENAI_CHAT = "openai_chat"


@strawberry.enum(description="Whether and which tool the model must call.")
class ToolChoiceMode(Enum):
    AUTO = "auto"
    ANY = "any"
    NONE = "none"
    TOOL = "tool"


@strawberry.input(description="A tool offered to the model.")
class ToolInput:
    name: str
    input_schema: JSON = strawberry.field(description="A JSON Schema object for its input.")
    description: Optional[str] = None


@strawberry.input
class ToolChoiceInput:
    mode: ToolChoiceMode
    name: Optional[str] = strawberry.field(default=None, description="With mode TOOL.")


def tool_definitions_in(tools: list[ToolInput]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in tools]


def options_in(model: Optional[str], max_tokens: Optional[int],
               tools: Optional[list[ToolInput]], tool_choice: Optional[ToolChoiceInput],
               recall: Optional[bool] = None) -> requests.Options:
    return requests.options(
        model=model, max_tokens=max_tokens, recall=recall,
        tools=None if tools is None else tool_definitions_in(tools),
        tool_choice=None if tool_choice is None else {
            "mode": tool_choice.mode.value, "name": tool_choice.name})


async def media_of(info: Info, nodes: Sequence[Node]) -> dict[str, str]:
    """The data of every medium the nodes name, by hash (the request's loader)."""
    hashes = list(dict.fromkeys(h for n in nodes for h in blocks.media_hashes(n.blocks)))
    data = await info.context.loaders.media.load_many(hashes)
    return {h: d for h, d in zip(hashes, data) if d is not None}


async def request_of(info: Info, rendered: Rendered, format: RequestFormat,
                     options: requests.Options) -> dict[str, Any]:
    media = await media_of(info, rendered.nodes)
    build = (requests.anthropic_messages if format is RequestFormat.ANTHROPIC_MESSAGES
             else requests.openai_chat)
    ttl = info.context.runtime.settings.cache_ttl  # as the service's own requests mark it
    return build(rendered.nodes, media, replace(options, cache_ttl=ttl))
