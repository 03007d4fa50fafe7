"""Sealed bookmarks (service/api/bookmark_seal.py), without a database: what opens and
what is refused, BAD_INPUT naming where the bookmark was sent."""
from __future__ import annotations

import base64

import pytest

from service.api.bookmark_seal import LIFETIME_SECONDS, BookmarkSeal
from service.api.bookmarks import MAX_BOOKMARK_CHARS
from service.errors import BadInput

KEY, OTHER_KEY = bytes(range(32)), bytes(range(1, 33))
NEO4J_BOOKMARK = "FB:kcwQRJpMe/u0SxmpsmMJ3pF3/8oAD0JAkA=="  # a Neo4j 5 bookmark, 39 chars
WHERE = "sent in the Ctxdag-Bookmarks header"


def refused(seal: BookmarkSeal, text: str, tenant: str = "a") -> str:
    with pytest.raises(BadInput) as caught:
        seal.open(text, tenant, WHERE)
    assert WHERE in caught.value.message
    return caught.value.message


def test_a_sealed_bookmark_opens_for_its_tenant_and_hides_what_it_holds():
    seal = BookmarkSeal([KEY])
    sealed = seal.seal(NEO4J_BOOKMARK, "a")
    assert seal.open(sealed, "a", WHERE) == NEO4J_BOOKMARK
    decoded = base64.urlsafe_b64decode(sealed + "=" * (-len(sealed) % 4))
    assert NEO4J_BOOKMARK.encode() not in decoded
    assert base64.b64decode(NEO4J_BOOKMARK[3:])[3:19] not in decoded  # the database id
    assert seal.seal(NEO4J_BOOKMARK, "a") != sealed  # a fresh nonce each time


def test_a_sealed_bookmark_keeps_to_the_malformed_rules():
    sealed = BookmarkSeal([KEY]).seal(NEO4J_BOOKMARK, "a")
    assert len(sealed) <= MAX_BOOKMARK_CHARS // 2
    assert all(c.isascii() and c.isalnum() or c in "-_" for c in sealed)


def test_every_altered_byte_is_refused():
    seal = BookmarkSeal([KEY])
    sealed = seal.seal(NEO4J_BOOKMARK, "a")
    data = base64.urlsafe_b64decode(sealed + "=" * (-len(sealed) % 4))
    for i in range(len(data)):
        changed = data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]
        refused(seal, base64.urlsafe_b64encode(changed).rstrip(b"=").decode())
    refused(seal, sealed[:-1])
    refused(seal, sealed[:-4])
    refused(seal, sealed + "A")


def test_another_tenant_or_another_key_cannot_open_it():
    sealed = BookmarkSeal([KEY]).seal(NEO4J_BOOKMARK, "a")
    assert "another tenant" in refused(BookmarkSeal([KEY]), sealed, tenant="b")
    assert "CTXDAG_BOOKMARK_KEY" in refused(BookmarkSeal([OTHER_KEY]), sealed)


def test_the_first_key_seals_and_every_key_opens():
    old = BookmarkSeal([KEY]).seal(NEO4J_BOOKMARK, "a")
    rotated = BookmarkSeal([OTHER_KEY, KEY])
    assert rotated.open(old, "a", WHERE) == NEO4J_BOOKMARK
    new = rotated.seal(NEO4J_BOOKMARK, "a")
    assert BookmarkSeal([OTHER_KEY]).open(new, "a", WHERE) == NEO4J_BOOKMARK
    refused(BookmarkSeal([KEY]), new)


def test_a_bookmark_expires_after_its_lifetime():
    now = [1_000_000.0]
    seal = BookmarkSeal([KEY], clock=lambda: now[0])
    sealed = seal.seal(NEO4J_BOOKMARK, "a")
    now[0] += LIFETIME_SECONDS - 1
    assert seal.open(sealed, "a", WHERE) == NEO4J_BOOKMARK
    now[0] += 1
    assert "expired" in refused(seal, sealed)


@pytest.mark.parametrize("text", [NEO4J_BOOKMARK, "garbage!", "AAAA", "", "A" * 200])
def test_what_was_never_sealed_is_refused(text):
    assert "not one this service hands out" in refused(BookmarkSeal([KEY]), text)


def test_without_a_configured_key_the_process_seals_with_its_own():
    from service.config import Settings

    settings = Settings.from_env({})
    first, second = BookmarkSeal.for_settings(settings), BookmarkSeal.for_settings(settings)
    assert second.open(first.seal(NEO4J_BOOKMARK, "a"), "a", WHERE) == NEO4J_BOOKMARK
    keyed = BookmarkSeal.for_settings(Settings.from_env({"CTXDAG_BOOKMARK_KEY": KEY.hex()}))
    refused(keyed, first.seal(NEO4J_BOOKMARK, "a"))
