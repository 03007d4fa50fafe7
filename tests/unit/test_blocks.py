"""The block model: every kind parsed, stored, estimated and projected; every field's
bad input refused with a message that names it."""
from __future__ import annotations

import base64
import struct
import zlib

import pytest

from service.errors import BadInput
from service.model import blocks
from service.model.blocks import (
    Document, Image, MediaRef, Text, Thinking, ToolResult, ToolUse, UrlSource,
)
from service.model.validate import Limits


class _Limits:
    max_content_bytes = 4096
    max_media_bytes = 2048


LIMITS = _Limits()


def png(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(header)) + chunk
            + struct.pack(">I", zlib.crc32(chunk)))


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_an_agent_turn_round_trips_through_its_stored_json():
    parsed = blocks.parse([
        {"type": "thinking", "thinking": "Let me look.", "signature": "sig=="},
        {"type": "text", "text": "Reading the file."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
        {"type": "tool_use", "id": "toolu_2", "name": "grep", "input": {"q": "x", "n": [1]}},
    ], "assistant", LIMITS)
    assert blocks.tool_use_ids(parsed.blocks) == ["toolu_1", "toolu_2"]
    assert parsed.plain_text is None and parsed.media == ()
    stored = blocks.dumps(parsed.blocks)
    assert blocks.loads(stored, "ignored") == parsed.blocks
    assert blocks.parse(blocks.to_json(parsed.blocks), "assistant", LIMITS).blocks == parsed.blocks


def test_thinking_and_its_signature_are_kept_verbatim():
    odd = "  spaced\n\tthinking  "
    parsed = blocks.parse([{"type": "thinking", "thinking": odd, "signature": "EqQB+/=="},
                           {"type": "text", "text": "ok"}], "assistant", LIMITS)
    again = blocks.loads(blocks.dumps(parsed.blocks), "")
    assert again[0] == Thinking(odd, "EqQB+/==")


def test_a_tool_result_takes_text_or_blocks_and_an_error_flag():
    parsed = blocks.parse([
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "file body"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "is_error": True,
         "content": [{"type": "text", "text": "no match"}]},
        {"type": "text", "text": "Also, hurry."},
    ], "tool", LIMITS)
    first, second, _ = parsed.blocks
    assert first == ToolResult("toolu_1", (Text("file body"),), False)
    assert second.is_error and blocks.answered_ids(parsed.blocks) == ["toolu_1", "toolu_2"]


def test_media_leaves_its_block_for_a_hash_and_is_described_for_the_estimate():
    image = png(3000, 1000)
    parsed = blocks.parse([
        {"type": "text", "text": "What is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": b64(image)}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": b64(image)}},
    ], "user", LIMITS)
    assert len(parsed.media) == 1, "the same data is stored once"
    ref = parsed.blocks[1].source
    assert isinstance(ref, MediaRef) and (ref.width, ref.height) == (3000, 1000)
    assert ref.bytes == len(image) and parsed.media[0].sha256 == ref.sha256
    assert "data" not in blocks.dumps(parsed.blocks)
    # Scaled to 1,568 px on the long edge: 1568 x 523 / 750 tokens.
    assert blocks.estimate(parsed.blocks) == (
        blocks.estimate([Text("What is this?")]) + 2 * (1568 * 523 // 750)
        + 3 * blocks.BLOCK_OVERHEAD_TOKENS)
    assert blocks.media_hashes(parsed.blocks) == [ref.sha256]


def test_an_image_by_url_and_documents():
    pdf = b"%PDF-1.4\n1 0 obj <</Type /Pages /Kids [2 0 R 3 0 R]>>\n2 0 obj <</Type /Page>>\n" \
          b"3 0 obj <</Type/Page>>\n%%EOF"
    parsed = blocks.parse([
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
        {"type": "document", "title": "Spec",
         "source": {"type": "base64", "media_type": "application/pdf", "data": b64(pdf)}},
        {"type": "document", "source": {"type": "base64", "media_type": "text/plain",
                                        "data": b64(b"x" * 400)}},
    ], "user", LIMITS)
    url_image, pdf_doc, text_doc = parsed.blocks
    assert url_image == Image(UrlSource("https://example.com/a.png"))
    assert isinstance(pdf_doc, Document) and pdf_doc.source.pages == 2
    assert blocks.estimate(parsed.blocks) == (blocks.IMAGE_MAX_TOKENS + 2 * blocks.PDF_PAGE_TOKENS
                                              + 100 + 3 * blocks.BLOCK_OVERHEAD_TOKENS)
    assert blocks.text_of(parsed.blocks) == (
        "[image https://example.com/a.png]\n\n[document Spec application/pdf, "
        f"{len(pdf)} bytes]\n\n[document text/plain, 400 bytes]")


@pytest.mark.parametrize("data, size", [
    (png(10, 20), (10, 20)),
    (b"GIF89a" + struct.pack("<HH", 33, 44) + b"\x00" * 8, (33, 44)),
    (b"\xff\xd8\xff\xe0" + struct.pack(">H", 16) + b"\x00" * 14
     + b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 480, 640) + b"\x00" * 12, (640, 480)),
    (b"RIFF\x00\x00\x00\x00WEBPVP8X" + b"\x00" * 8 + (99).to_bytes(3, "little")
     + (49).to_bytes(3, "little"), (100, 50)),
    (b"not an image at all", None),
])
def test_image_sizes_are_read_from_headers(data, size):
    assert blocks.image_size(data) == size


def test_one_text_block_is_plain_text_estimated_as_before():
    parsed = blocks.parse([{"type": "text", "text": "hello there"}], "user", LIMITS)
    assert parsed.plain_text == "hello there"
    assert blocks.estimate(parsed.blocks) == (len("hello there") + 3) // 4
    assert blocks.loads(None, "hello there") == (Text("hello there"),)


def test_the_text_projection_names_tools_and_leaves_thinking_out():
    projected = blocks.text_of([
        Thinking("secret", "s"), Text("Checking."),
        ToolUse("t1", "read", {"path": "a", "b": 1}),
    ])
    assert projected == 'Checking.\n\n[tool_use read {"b": 1, "path": "a"}]'
    assert blocks.text_of([ToolResult("t1", (Text("line 1"),), True)]) == \
        "[tool_result t1: error]\nline 1"
    assert blocks.text_of([Thinking("only", "s")]) == "[thinking]"


def test_every_kind_has_a_token_estimate():
    for block in (Text("abcd" * 10), Thinking("abcd" * 10, "sig"),
                  blocks.RedactedThinking("x" * 400), ToolUse("t", "n", {"k": "v"}),
                  ToolResult("t", (Text("abcd"),)), Image(UrlSource("https://x.io/a.png")),
                  Document(MediaRef("application/pdf", "0" * 64, 10))):
        assert blocks.estimate([block, Text("x")]) > blocks.estimate([Text("x")])


def test_the_limits_object_of_the_ledger_carries_the_media_bound():
    assert Limits().max_media_bytes == 5 * 1024 * 1024


BAD = [
    ("not a list", "user", "must be a list of content blocks"),
    ([], "user", "at least one block"),
    ([{"type": "text", "text": "x"}] * (blocks.MAX_BLOCKS + 1), "user", "the limit is 1000"),
    (["text"], "user", "blocks[0] must be an object"),
    ([{"type": "video"}], "user", "type 'video' is not one of"),
    ([{"type": "text", "text": "x", "color": "red"}], "user", "has no field color"),
    ([{"type": "text", "text": ""}], "user", "blocks[0].text is empty"),
    ([{"type": "text", "text": 3}], "user", "blocks[0].text must be a string"),
    ([{"type": "text", "text": "\ud800"}], "user", "not valid Unicode"),
    ([{"type": "tool_use", "id": "t", "name": "n", "input": {}}], "user",
     "a message of role user cannot hold tool_use blocks"),
    ([{"type": "thinking", "thinking": "x", "signature": "s"}], "user",
     "a message of role user cannot hold thinking blocks"),
    ([{"type": "image", "source": {"type": "url", "url": "https://a.io/x.png"}}], "assistant",
     "a message of role assistant cannot hold image blocks"),
    ([{"type": "thinking", "thinking": "x"}], "assistant", "blocks[0].signature must be a string"),
    ([{"type": "thinking", "thinking": "x", "signature": " "}], "assistant",
     "blocks[0].signature is empty"),
    ([{"type": "redacted_thinking", "data": ""}], "assistant", "blocks[0].data is empty"),
    ([{"type": "tool_use", "id": "has space", "name": "n", "input": {}}], "assistant",
     "blocks[0].id must be 1 to 128 letters"),
    ([{"type": "tool_use", "id": "t" * 129, "name": "n", "input": {}}], "assistant",
     "blocks[0].id must be 1 to 128"),
    ([{"type": "tool_use", "id": "t", "name": "bad.name", "input": {}}], "assistant",
     "blocks[0].name must be 1 to 64"),
    ([{"type": "tool_use", "id": "t", "name": "n", "input": "{}"}], "assistant",
     "blocks[0].input must be a JSON object"),
    ([{"type": "tool_use", "id": "t", "name": "n", "input": {"x": float("nan")}}], "assistant",
     "not JSON-serializable"),
    ([{"type": "tool_use", "id": "t", "name": "n", "input": {}},
      {"type": "tool_use", "id": "t", "name": "m", "input": {}}], "assistant",
     "tool_use ids must be unique in a message; repeated: t"),
    ([{"type": "tool_result", "tool_use_id": "t"},
      {"type": "tool_result", "tool_use_id": "t"}], "tool", "tool_result tool_use_ids must be unique"),
    ([{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}], "tool",
     "blocks[0].is_error must be true or false"),
    ([{"type": "tool_result", "tool_use_id": "t", "content": 5}], "tool",
     "blocks[0].content must be a string or a list"),
    ([{"type": "tool_result", "tool_use_id": "t",
       "content": [{"type": "document", "source": {"type": "url", "url": "https://a.io"}}]}],
     "tool", "cannot hold document blocks"),
    ([{"type": "text", "text": "first"}, {"type": "tool_result", "tool_use_id": "t"}], "tool",
     "tool_result blocks come first"),
    ([{"type": "image", "source": {"type": "url", "url": "https://a.io/x.png"}}], "tool",
     "a tool message holds tool_result blocks"),
    ([{"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "AA=="}}],
     "user", "media_type must be one of: image/jpeg"),
    ([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "%%"}}],
     "user", "data is not valid base64"),
    ([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": ""}}],
     "user", "data is empty"),
    ([{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                   "data": b64(b"x" * 3000)}}], "user", "over the limit of 2048"),
    ([{"type": "image", "source": {"type": "url", "url": "file:///etc/passwd"}}], "user",
     "must be an http(s) URL"),
    ([{"type": "image", "source": {"type": "file", "file_id": "f"}}], "user",
     "media_type must be one of"),
    ([{"type": "image", "source": "https://a.io/x.png"}], "user", "source must be an object"),
    ([{"type": "image", "source": {"type": "media", "media_type": "image/png", "sha256": "abc",
                                   "bytes": 3}}], "user", "sha256 must be 64 lowercase hex"),
    ([{"type": "document", "title": "t" * 201,
       "source": {"type": "url", "url": "https://a.io/x.pdf"}}], "user", "title is 201 characters"),
    ([{"type": "text", "text": "x" * 5000}], "user", "the limit is 4096 bytes"),
    ([{"type": "text", "text": "x"}], "robot", "cannot hold content blocks"),
]


@pytest.mark.parametrize("value, role, message", BAD)
def test_bad_blocks_are_refused_naming_the_field(value, role, message):
    with pytest.raises(BadInput) as refused:
        blocks.parse(value, role, LIMITS)
    assert message in refused.value.message
