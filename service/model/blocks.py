"""A message's content blocks: the one home of their types, rules, tokens and text.

A message is an ordered list of blocks. Their JSON shape (what clients send, what is
stored on a node as `blocks`, what export carries) follows the Anthropic Messages API's
content blocks, the shape most agent transcripts already use:

    {"type": "text", "text": …}
    {"type": "thinking", "thinking": …, "signature": …}        kept verbatim
    {"type": "redacted_thinking", "data": …}
    {"type": "tool_use", "id": …, "name": …, "input": {…}}
    {"type": "tool_result", "tool_use_id": …, "content": [text | image…], "is_error": bool}
    {"type": "image", "source": …}
    {"type": "document", "source": …, "title"?: …}

A media source is `{"type": "base64", "media_type", "data"}` or `{"type": "url", "url"}`
when a client sends it. Base64 data is not kept in the block: it is stored once per
content hash on a `:Media` node of the tenant (`Media` below) and the stored block names
it, `{"type": "media", "media_type", "sha256", "bytes"}` (plus `width`/`height` of an
image, `pages` of a PDF, for the token estimate). Everything outside this module passes
blocks through without looking inside, apart from the provider requests
(service/turns/requests.py), which map each kind to a provider's own shape.

Which blocks each role holds:
- user: text, image, document;
- assistant: text, thinking, redacted_thinking, tool_use;
- tool: tool_result blocks first (at least one), then text, image or document; or, as
  before blocks existed, plain text alone (a tool's output not tied to a tool use);
- system (ROOT) and summary: text.
A message of one text block is plain text: it is stored as `content` alone, exactly as
before blocks existed.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import struct
from dataclasses import dataclass, field
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, Protocol, Union

from ..errors import BadInput
from ..tokens import estimate_tokens
from . import validate
from .validate import shown, some

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
DOCUMENT_TYPES = ("application/pdf", "text/plain")
MAX_BLOCKS = 1000  # blocks in one message (each parallel tool call is one)
MAX_TOOL_NAME_LENGTH = 64  # both providers' limit on a tool's name
MAX_URL_LENGTH = 2048
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_TOOL_USE_ID = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")  # the Messages API's pattern

# Token estimates for what is not text (service/tokens.py estimates text). An image costs
# about width × height / 750 tokens once the provider has scaled it to at most 1,568 px on
# its long edge (so at most about 1,600); one of unknown size (a URL) is counted at that
# most. A PDF page costs 1,500–3,000 tokens (text plus the page image): counted at 2,000.
IMAGE_MAX_EDGE = 1568
IMAGE_MAX_TOKENS = 1600
PDF_PAGE_TOKENS = 2000
BLOCK_OVERHEAD_TOKENS = 4  # a block's own framing (type, ids, separators)


class BlockLimits(Protocol):
    max_content_bytes: int  # a message's blocks as JSON, media data excluded
    max_media_bytes: int  # one image or document, decoded


# --------------------------------------------------------------------------- types


@dataclass(frozen=True)
class Text:
    text: str
    kind = "text"


@dataclass(frozen=True)
class Thinking:
    thinking: str
    signature: str
    kind = "thinking"


@dataclass(frozen=True)
class RedactedThinking:
    data: str
    kind = "redacted_thinking"


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: Mapping[str, Any]
    kind = "tool_use"


@dataclass(frozen=True)
class MediaRef:
    """Stored media: the `:Media` node holding the data, by its content hash."""

    media_type: str
    sha256: str
    bytes: int
    width: int | None = None  # an image's pixels, when its header says
    height: int | None = None
    pages: int | None = None  # a PDF's pages, as counted in its page tree


@dataclass(frozen=True)
class UrlSource:
    url: str


Source = Union[MediaRef, UrlSource]


@dataclass(frozen=True)
class Image:
    source: Source
    kind = "image"


@dataclass(frozen=True)
class Document:
    source: Source
    title: str | None = None
    kind = "document"


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    content: tuple[Union[Text, Image], ...]
    is_error: bool = False
    kind = "tool_result"


Block = Union[Text, Thinking, RedactedThinking, ToolUse, ToolResult, Image, Document]


@dataclass(frozen=True)
class Media:
    """Image or document data, stored once per (tenant, sha256) on its own node."""

    sha256: str
    media_type: str
    data: str = field(repr=False)  # base64, as the providers take it

    @property
    def bytes(self) -> int:
        return len(self.data) * 3 // 4 - self.data[-2:].count("=")


@dataclass(frozen=True)
class Parsed:
    """A message's blocks as checked, and the media they carried (to store by hash)."""

    blocks: tuple[Block, ...]
    media: tuple[Media, ...] = ()

    @property
    def plain_text(self) -> str | None:
        """The text, when the message is one text block (stored as content alone)."""
        if len(self.blocks) == 1 and isinstance(self.blocks[0], Text):
            return self.blocks[0].text
        return None


# --------------------------------------------------------------------------- rules

_ROLE_KINDS = {
    "user": {"text", "image", "document"},
    "assistant": {"text", "thinking", "redacted_thinking", "tool_use"},
    "tool": {"tool_result", "text", "image", "document"},
    "system": {"text"},
    "summary": {"text"},
    "carry": {"text"},
}


def parse(value: object, role: str, limits: BlockLimits, what: str = "blocks") -> Parsed:
    """A client's (or an import's) blocks, checked against every rule above.

    Base64 media is taken out of its block and returned as `Media`, the block naming it
    by hash; a `media` source (as stored) is accepted as it is, its data being stored
    already.
    """
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise BadInput(f"{what} must be a list of content blocks")
    if not value:
        raise BadInput(f"{what} must hold at least one block")
    if len(value) > MAX_BLOCKS:
        raise BadInput(f"{what} hold {len(value)} blocks; the limit is {MAX_BLOCKS}",
                       size=len(value), limit=MAX_BLOCKS)
    allowed = _ROLE_KINDS.get(role)
    if allowed is None:
        raise BadInput(f"a message of role {role} cannot hold content blocks")
    media: dict[str, Media] = {}
    blocks = tuple(_block(item, allowed, role, limits, media, f"{what}[{i}]")
                   for i, item in enumerate(value))
    _check_order(blocks, role, what)
    _check_ids(blocks, what)
    size = validate.utf8_size(dumps(blocks), what)
    if size > limits.max_content_bytes:
        raise BadInput(f"{what} are {size} bytes of JSON (media data apart); the limit is "
                       f"{limits.max_content_bytes} bytes", size=size,
                       limit=limits.max_content_bytes)
    return Parsed(blocks, tuple(media.values()))


def plain(text: str) -> Parsed:
    return Parsed((Text(text),))


def _check_order(blocks: tuple[Block, ...], role: str, what: str) -> None:
    if role != "tool":
        return
    results = [isinstance(b, ToolResult) for b in blocks]
    if not any(results):
        if len(blocks) == 1 and isinstance(blocks[0], Text):
            return  # a tool's plain output, not tied to a tool use
        raise BadInput(f"{what}: a tool message holds tool_result blocks (or plain text alone)")
    first_other = next((i for i, r in enumerate(results) if not r), len(results))
    if any(results[first_other:]):
        raise BadInput(f"{what}: tool_result blocks come first in a tool message, before "
                       f"any other block (block {first_other} is a {blocks[first_other].kind})")


def _check_ids(blocks: tuple[Block, ...], what: str) -> None:
    for ids, named in ((tool_use_ids(blocks), "tool_use ids"),
                       (answered_ids(blocks), "tool_result tool_use_ids")):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise BadInput(f"{what}: {named} must be unique in a message; repeated: "
                           f"{some(repeated)}")


def _block(item: object, allowed: set[str], role: str, limits: BlockLimits,
           media: dict[str, Media], what: str) -> Block:
    if not isinstance(item, Mapping):
        raise BadInput(f"{what} must be an object with a \"type\"")
    kind = item.get("type")
    if kind not in _PARSERS:
        raise BadInput(f"{what}: type {shown(kind)} is not one of: {', '.join(_PARSERS)}")
    if kind not in allowed:
        raise BadInput(f"{what}: a message of role {role} cannot hold {kind} blocks "
                       f"(it may hold: {', '.join(sorted(allowed))})")
    parser, fields = _PARSERS[kind]
    unknown = sorted(set(item) - fields - {"type"})
    if unknown:
        raise BadInput(f"{what}: a {kind} block has no field {some(unknown)}")
    return parser(item, limits, media, what)


def _string(item: Mapping[str, Any], key: str, what: str, *, blank: bool = False) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise BadInput(f"{what}.{key} must be a string")
    validate.utf8_size(value, f"{what}.{key}")
    if not blank and not value.strip():
        raise BadInput(f"{what}.{key} is empty")
    return value


def _text(item, limits, media, what) -> Text:
    return Text(_string(item, "text", what))


def _thinking(item, limits, media, what) -> Thinking:
    # Kept verbatim: the provider checks the signature against the thinking text.
    return Thinking(_string(item, "thinking", what, blank=True), _string(item, "signature", what))


def _redacted(item, limits, media, what) -> RedactedThinking:
    return RedactedThinking(_string(item, "data", what))


def _tool_use(item, limits, media, what) -> ToolUse:
    use_id = _tool_use_id(item.get("id"), f"{what}.id")
    name = item.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise BadInput(f"{what}.name must be 1 to {MAX_TOOL_NAME_LENGTH} letters, digits, "
                       f"'_' or '-', not {shown(name)}")
    tool_input = item.get("input")
    if not isinstance(tool_input, Mapping):
        raise BadInput(f"{what}.input must be a JSON object")
    validate.json_object(tool_input, _InputLimit(limits.max_content_bytes), f"{what}.input")
    return ToolUse(use_id, name, dict(tool_input))


@dataclass(frozen=True)
class _InputLimit:
    max_metadata_bytes: int  # validate.json_object's name for its size limit


def _tool_use_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not _TOOL_USE_ID.match(value):
        raise BadInput(f"{what} must be 1 to 128 letters, digits, '_' or '-' "
                       f"(the providers' pattern), not {shown(value)}")
    return value


def _tool_result(item, limits, media, what) -> ToolResult:
    use_id = _tool_use_id(item.get("tool_use_id"), f"{what}.tool_use_id")
    is_error = item.get("is_error", False)
    if not isinstance(is_error, bool):
        raise BadInput(f"{what}.is_error must be true or false")
    content = item.get("content", "")
    if isinstance(content, str):
        parts: tuple[Union[Text, Image], ...] = (Text(content),) if content else ()
    elif isinstance(content, Sequence):
        parts = tuple(_block(part, {"text", "image"}, "tool_result", limits, media,
                             f"{what}.content[{i}]") for i, part in enumerate(content))
    else:
        raise BadInput(f"{what}.content must be a string or a list of text and image blocks")
    return ToolResult(use_id, parts, is_error)  # type: ignore[arg-type]


def _image(item, limits, media, what) -> Image:
    return Image(_source(item.get("source"), IMAGE_TYPES, limits, media, f"{what}.source"))


def _document(item, limits, media, what) -> Document:
    title = item.get("title")
    if title is not None:
        title = validate.title(title, f"{what}.title")
    return Document(_source(item.get("source"), DOCUMENT_TYPES, limits, media,
                            f"{what}.source"), title)


def _source(value: object, types: tuple[str, ...], limits: BlockLimits,
            media: dict[str, Media], what: str) -> Source:
    if not isinstance(value, Mapping):
        raise BadInput(f"{what} must be an object: base64 data or a url")
    kind = value.get("type")
    if kind == "url":
        _only(value, {"type", "url"}, what)
        url = value.get("url")
        if not isinstance(url, str) or not re.match(r"^https?://\S+$", url) \
                or len(url) > MAX_URL_LENGTH:
            raise BadInput(f"{what}.url must be an http(s) URL of at most {MAX_URL_LENGTH} "
                           "characters")
        return UrlSource(url)
    media_type = value.get("media_type")
    if media_type not in types:
        raise BadInput(f"{what}.media_type must be one of: {', '.join(types)}; "
                       f"not {shown(media_type)}")
    if kind == "base64":
        _only(value, {"type", "media_type", "data"}, what)
        data = value.get("data")
        if not isinstance(data, str):
            raise BadInput(f"{what}.data must be base64 text")
        decoded = _decode(data, limits, what)
        item = Media(hashlib.sha256(decoded).hexdigest(), media_type,
                     base64.b64encode(decoded).decode("ascii"))
        media.setdefault(item.sha256, item)
        return _describe(item.sha256, media_type, decoded)
    if kind == "media":
        _only(value, {"type", "media_type", "sha256", "bytes", "width", "height", "pages"}, what)
        return _media_ref(value, media_type, limits, what)
    raise BadInput(f"{what}.type must be base64 or url, not {shown(kind)}")


def _only(value: Mapping[str, Any], fields: set[str], what: str) -> None:
    unknown = sorted(set(value) - fields)
    if unknown:
        raise BadInput(f"{what} has no field {some(unknown)}")


def _decode(data: str, limits: BlockLimits, what: str) -> bytes:
    if len(data) > (limits.max_media_bytes + 2) // 3 * 4 + 4:
        raise BadInput(f"{what}.data is over the limit of {limits.max_media_bytes} bytes",
                       limit=limits.max_media_bytes)
    try:
        decoded = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise BadInput(f"{what}.data is not valid base64") from None
    if not decoded:
        raise BadInput(f"{what}.data is empty")
    if len(decoded) > limits.max_media_bytes:
        raise BadInput(f"{what}.data is {len(decoded)} bytes; the limit is "
                       f"{limits.max_media_bytes}", size=len(decoded),
                       limit=limits.max_media_bytes)
    return decoded


def _media_ref(value: Mapping[str, Any], media_type: str, limits: BlockLimits,
               what: str) -> MediaRef:
    digest = value.get("sha256")
    if not isinstance(digest, str) or not re.match(r"^[0-9a-f]{64}$", digest):
        raise BadInput(f"{what}.sha256 must be 64 lowercase hex digits")
    size = validate.count(value.get("bytes"), f"{what}.bytes", minimum=1)
    if size > limits.max_media_bytes:
        raise BadInput(f"{what}.bytes is {size}; the limit is {limits.max_media_bytes}")
    extents = {key: validate.optional_count(value.get(key), f"{what}.{key}")
               for key in ("width", "height", "pages")}
    return MediaRef(media_type, digest, size, **extents)


def _describe(digest: str, media_type: str, data: bytes) -> MediaRef:
    width = height = pages = None
    if media_type.startswith("image/"):
        width, height = image_size(data) or (None, None)
    elif media_type == "application/pdf":
        pages = len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", data)) or None
    return MediaRef(media_type, digest, len(data), width, height, pages)


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, JPEG or WebP header; None when unreadable."""
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n":
            return struct.unpack(">II", data[16:24])
        if data[:6] in (b"GIF87a", b"GIF89a"):
            return struct.unpack("<HH", data[6:10])
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            chunk = data[12:16]
            if chunk == b"VP8X":
                return (int.from_bytes(data[24:27], "little") + 1,
                        int.from_bytes(data[27:30], "little") + 1)
            if chunk == b"VP8L":
                bits = int.from_bytes(data[21:25], "little")
                return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
            if chunk == b"VP8 ":
                w, h = struct.unpack("<HH", data[26:30])
                return w & 0x3FFF, h & 0x3FFF
        if data[:2] == b"\xff\xd8":
            return _jpeg_size(data)
    except struct.error:
        return None
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        length = struct.unpack(">H", data[at + 2:at + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        at += 2 + length
    return None


_PARSERS = {
    "text": (_text, {"text"}),
    "thinking": (_thinking, {"thinking", "signature"}),
    "redacted_thinking": (_redacted, {"data"}),
    "tool_use": (_tool_use, {"id", "name", "input"}),
    "tool_result": (_tool_result, {"tool_use_id", "content", "is_error"}),
    "image": (_image, {"source"}),
    "document": (_document, {"source", "title"}),
}


# --------------------------------------------------------------------------- JSON


def to_json(blocks: Sequence[Block]) -> list[dict[str, Any]]:
    """The blocks in their stored JSON shape (media by reference)."""
    return [block_json(b) for b in blocks]


def dumps(blocks: Sequence[Block]) -> str:
    """The stored text of a node's blocks: compact, keys in a fixed order."""
    return _STORED.encode(to_json(blocks))


# json.dumps(…, ensure_ascii=False, separators=(",", ":"), sort_keys=True), made once: a
# transcript's import dumps every message's blocks, and json.dumps builds an encoder a call.
_STORED = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def loads(text: str | None, content: str) -> tuple[Block, ...]:
    """A stored node's blocks: its `blocks` text, or its content as one text block."""
    if text is None:
        return (Text(content),)
    return tuple(_from_json(item) for item in json.loads(text))


def block_json(block: Block) -> dict[str, Any]:
    """One block in its stored JSON shape: the Messages API's, for every kind but media
    (stored by reference) and a tool result (its error flag always present)."""
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Thinking):
        return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
    if isinstance(block, RedactedThinking):
        return {"type": "redacted_thinking", "data": block.data}
    if isinstance(block, ToolUse):
        return {"type": "tool_use", "id": block.id, "name": block.name,
                "input": dict(block.input)}
    if isinstance(block, ToolResult):
        return {"type": "tool_result", "tool_use_id": block.tool_use_id,
                "content": to_json(block.content), "is_error": block.is_error}
    shaped = {"type": block.kind, "source": source_json(block.source)}
    if isinstance(block, Document) and block.title is not None:
        shaped["title"] = block.title
    return shaped


def source_json(source: Source) -> dict[str, Any]:
    if isinstance(source, UrlSource):
        return {"type": "url", "url": source.url}
    shaped: dict[str, Any] = {"type": "media", "media_type": source.media_type,
                              "sha256": source.sha256, "bytes": source.bytes}
    for key in ("width", "height", "pages"):
        if getattr(source, key) is not None:
            shaped[key] = getattr(source, key)
    return shaped


def _from_json(item: Mapping[str, Any]) -> Block:
    kind = item["type"]
    if kind == "text":
        return Text(item["text"])
    if kind == "thinking":
        return Thinking(item["thinking"], item["signature"])
    if kind == "redacted_thinking":
        return RedactedThinking(item["data"])
    if kind == "tool_use":
        return ToolUse(item["id"], item["name"], item["input"])
    if kind == "tool_result":
        return ToolResult(item["tool_use_id"],
                          tuple(_from_json(part) for part in item["content"]),  # type: ignore[misc]
                          item["is_error"])
    source = item["source"]
    loaded: Source = (UrlSource(source["url"]) if source["type"] == "url" else MediaRef(
        source["media_type"], source["sha256"], source["bytes"], source.get("width"),
        source.get("height"), source.get("pages")))
    if kind == "image":
        return Image(loaded)
    return Document(loaded, item.get("title"))


# --------------------------------------------------------------------------- reading


def tool_use_ids(blocks: Sequence[Block]) -> list[str]:
    """The tool uses a message opens, in order: the next message must answer each."""
    return [b.id for b in blocks if isinstance(b, ToolUse)]


def answered_ids(blocks: Sequence[Block]) -> list[str]:
    """The tool uses a message's tool_result blocks answer, in order."""
    return [b.tool_use_id for b in blocks if isinstance(b, ToolResult)]


def media_sources(blocks: Sequence[Block]) -> list[MediaRef]:
    """The stored media the blocks name, in order (a medium named twice is listed twice)."""
    return [part.source for block in blocks
            for part in (block.content if isinstance(block, ToolResult) else (block,))
            if isinstance(getattr(part, "source", None), MediaRef)]


def media_hashes(blocks: Sequence[Block]) -> list[str]:
    """The stored media the blocks name, each once, in order."""
    return list(dict.fromkeys(source.sha256 for source in media_sources(blocks)))


def estimate(blocks: Sequence[Block]) -> int:
    """The stored token estimate of a message: every block kind counts."""
    if len(blocks) == 1 and isinstance(blocks[0], Text):
        return estimate_tokens(blocks[0].text)  # as before blocks existed
    return sum(_block_tokens(b) + BLOCK_OVERHEAD_TOKENS for b in blocks)


def _block_tokens(block: Block) -> int:
    if isinstance(block, Text):
        return estimate_tokens(block.text)
    if isinstance(block, Thinking):
        return estimate_tokens(block.thinking)
    if isinstance(block, RedactedThinking):
        return estimate_tokens(block.data) // 4  # encrypted text: about a byte per character
    if isinstance(block, ToolUse):
        return estimate_tokens(block.name + json.dumps(block.input, ensure_ascii=False))
    if isinstance(block, ToolResult):
        return sum(_block_tokens(part) for part in block.content)
    if isinstance(block, Image):
        return _image_tokens(block.source)
    return _document_tokens(block.source)


def _image_tokens(source: Source) -> int:
    if not isinstance(source, MediaRef) or not source.width or not source.height:
        return IMAGE_MAX_TOKENS
    scale = min(1.0, IMAGE_MAX_EDGE / max(source.width, source.height))
    return max(1, min(IMAGE_MAX_TOKENS,
                      round(source.width * scale) * round(source.height * scale) // 750))


def _document_tokens(source: Source) -> int:
    if isinstance(source, MediaRef) and source.media_type == "text/plain":
        return (source.bytes + 3) // 4
    pages = source.pages if isinstance(source, MediaRef) and source.pages else 1
    return pages * PDF_PAGE_TOKENS


def text_of(blocks: Sequence[Block]) -> str:
    """The text projection: `Message.content`, previews, search and plain-text clients.

    Text verbatim; a tool use as `[tool_use name {input}]`; a result as `[tool_result
    id]` (or `[tool_result id: error]`) followed by its text; an image or document as a
    bracketed mention. Thinking is the model's private reasoning and is left out; a
    message of thinking alone reads `[thinking]`.
    """
    parts = [p for p in (_project(b) for b in blocks) if p]
    return "\n\n".join(parts) or "[thinking]"


def thinking_of(blocks: Sequence[Block]) -> str | None:
    """The text of a message's thinking blocks (what search finds of the model's reasoning,
    stored as the node's `thinking`); None when it has none."""
    parts = [b.thinking for b in blocks if isinstance(b, Thinking) and b.thinking]
    return "\n\n".join(parts) or None


def _project(block: Block) -> str:
    if isinstance(block, Text):
        return block.text
    if isinstance(block, (Thinking, RedactedThinking)):
        return ""
    if isinstance(block, ToolUse):
        return (f"[tool_use {block.name} "
                f"{json.dumps(block.input, ensure_ascii=False, sort_keys=True)}]")
    if isinstance(block, ToolResult):
        head = f"[tool_result {block.tool_use_id}{': error' if block.is_error else ''}]"
        body = "\n".join(p for p in (_project(part) for part in block.content) if p)
        return f"{head}\n{body}" if body else head
    if isinstance(block, Image):
        return f"[image {_mention(block.source)}]"
    title = f" {block.title}" if block.title else ""
    return f"[document{title} {_mention(block.source)}]"


def _mention(source: Source) -> str:
    if isinstance(source, UrlSource):
        return source.url
    return f"{source.media_type}, {source.bytes} bytes"


# --------------------------------------------------------------------------- writing


def implied(blocks: Sequence[Block]) -> dict[str, list[Any]]:
    """What a message's blocks imply beyond its properties, as the writes take it (its
    ToolUse nodes, the tool uses it answers, the media it carries): `tool_uses` [{id,
    name}] in order, `answers` (tool_use ids) with `answer_errors` alike ordered, and
    `media_refs` (hashes, each once)."""
    results = [b for b in blocks if isinstance(b, ToolResult)]
    return {
        "tool_uses": [{"id": b.id, "name": b.name} for b in blocks if isinstance(b, ToolUse)],
        "answers": [r.tool_use_id for r in results],
        "answer_errors": [r.is_error for r in results],
        "media_refs": media_hashes(blocks),
    }


@dataclass(frozen=True)
class Written:
    """A message as a write statement takes it (cypher/fragments/node_write.cypher)."""

    parsed: Parsed
    text: str  # the text projection, stored as `content`

    @cached_property
    def params(self) -> dict[str, Any]:
        blocks = self.parsed.blocks
        return {
            "content": self.text,
            "thinking": thinking_of(blocks),
            "tokens": estimate(blocks),
            "blocks": None if self.parsed.plain_text is not None else dumps(blocks),
            **implied(blocks),
            "media": [{"sha256": m.sha256, "media_type": m.media_type, "data": m.data,
                       "bytes": m.bytes} for m in self.parsed.media],
        }

    @property
    def problem_ids(self) -> dict[str, Any]:
        """What a refusal's message names of this message."""
        return {"answers": answered_ids(self.parsed.blocks)}


def message_blocks(role: Any, content: object, value: object, limits: Any,
                   what: str = "blocks") -> Written:
    """A message given as plain `content` or as `blocks` (exactly one of them)."""
    role_name = getattr(role, "value", role)
    if (content is None) == (value is None):
        raise BadInput("a message is given as content or as blocks: exactly one of them")
    if value is None:
        text = validate.content(content, limits)
        return Written(plain(text), text)
    parsed = parse(value, role_name, limits, what)
    text = parsed.plain_text if parsed.plain_text is not None else text_of(parsed.blocks)
    return Written(parsed, validate.content(text, limits, f"the text of the {what}"))
