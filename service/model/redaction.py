"""Redaction: what a redacted node holds in place of its content (docs/guides/redaction.md).

A redacted message keeps its structure and nothing of what it said: each tool use keeps
its id and name with an empty input, each tool result the id it answers and its error
flag with the marker as its text, and every other block (text, thinking, images,
documents) gives way to one text block of the marker. The form is fixed, so redacting it
again changes nothing (`is_redacted_form`), and it is an ordinary message of its role: the
render, every provider request and the stored-value rules take it as they take any other.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from .blocks import Block, MediaRef, Parsed, Text, ToolResult, ToolUse, Written, media_sources, text_of

MARKER = "[redacted]"


def redacted_blocks(blocks: Sequence[Block]) -> tuple[Block, ...]:
    """The redacted form of a message's blocks."""
    results = [ToolResult(b.tool_use_id, (Text(MARKER),), b.is_error)
               for b in blocks if isinstance(b, ToolResult)]
    uses = [ToolUse(b.id, b.name, {}) for b in blocks if isinstance(b, ToolUse)]
    return (*results, *([] if results else [Text(MARKER)]), *uses)


def is_redacted_form(blocks: Sequence[Block]) -> bool:
    return tuple(blocks) == redacted_blocks(blocks)


@dataclass(frozen=True)
class Erasure:
    """What a redaction writes on a node: its redacted blocks as node_write stores blocks
    (`params`), and the media its blocks named, by hash and size (`media_json`, stored as
    the node's `redacted_media`; None when it named none)."""

    params: dict[str, Any]
    media_json: str | None


def erasure(blocks: Sequence[Block]) -> Erasure:
    kept = redacted_blocks(blocks)
    parsed = Parsed(kept)
    text = parsed.plain_text if parsed.plain_text is not None else text_of(kept)
    media = {m.sha256: m for m in media_sources(blocks)}
    return Erasure(Written(parsed, text).params,
                   media_json(list(media.values())) if media else None)


def media_json(media: Sequence[MediaRef]) -> str:
    """The stored `redacted_media`: each medium once, in hash order, as compact JSON."""
    return json.dumps([{"sha256": m.sha256, "media_type": m.media_type, "bytes": m.bytes}
                       for m in sorted(media, key=lambda m: m.sha256)],
                      separators=(",", ":"), sort_keys=True)
