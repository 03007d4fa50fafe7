"""Bookmarks as clients hold them: each Neo4j bookmark sealed, so a client learns nothing
from it and can make none of its own.

A Neo4j bookmark is the id of a database and of a transaction in it, in plain base64.
Handed out as it is, it told every client the database's transaction counter (so how
many writes every tenant made meanwhile), and a client could write one naming a future
transaction, which held each statement sent with it until Neo4j gave up waiting.

A sealed bookmark is AES-256-GCM-SIV (authenticated encryption: the ciphertext hides the
bookmark, and a change to any bit fails to open) over the Neo4j bookmark and the time it
expires, with the tenant as associated data, so one tenant's bookmark opens for no other.
Its text is URL-safe base64 without padding of: a version byte, a 12-byte random nonce,
the ciphertext and its 16-byte tag: a Neo4j 5 bookmark of 31–39 characters seals to 86–96.

Keys (`Settings.bookmark_keys`, CTXDAG_BOOKMARK_KEY): the first seals, every one opens,
so a key can be replaced without failing the bookmarks clients hold (list the new one
first, keep the old one for a lifetime, then drop it). With none configured, the process
makes a random key of its own: its bookmarks then open on that process only, until it
restarts, and on any other replica they are BAD_INPUT saying so. GCM-SIV rather than GCM
because the nonces are random: should two ever repeat under one key, GCM-SIV reveals only
whether the two plaintexts were equal, where GCM would give the key's authenticator away.
"""
from __future__ import annotations

import base64
import binascii
import functools
import re
import secrets
import struct
import time
from typing import Callable, Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCMSIV

from ..config import BOOKMARK_KEY_BYTES, Settings
from ..errors import BadInput

VERSION = 1
LIFETIME_SECONDS = 24 * 3600
_NONCE_BYTES = 12
_TAG_BYTES = 16
_EXPIRES = struct.Struct(">I")  # unix seconds
_HEADER_BYTES = 1 + _NONCE_BYTES
_AAD_PREFIX = b"ctxdag bookmark\x00"
_URLSAFE_BASE64 = re.compile(r"[A-Za-z0-9_-]+")


@functools.cache
def _process_key() -> bytes:
    """This process's own key, made when first needed (no CTXDAG_BOOKMARK_KEY)."""
    return secrets.token_bytes(BOOKMARK_KEY_BYTES)


class BookmarkSeal:
    """Seals Neo4j bookmarks for a tenant, and opens what clients send back."""

    def __init__(self, keys: Sequence[bytes], *, lifetime_seconds: int = LIFETIME_SECONDS,
                 clock: Callable[[], float] = time.time) -> None:
        if not keys:
            raise ValueError("a BookmarkSeal needs at least one key")
        self._ciphers = [AESGCMSIV(key) for key in keys]
        self.lifetime_seconds = lifetime_seconds
        self._clock = clock

    @classmethod
    def for_settings(cls, settings: Settings) -> "BookmarkSeal":
        """The configured keys; none configured: this process's own random key."""
        return cls(settings.bookmark_keys or (_process_key(),))

    def seal(self, bookmark: str, tenant: str) -> str:
        nonce = secrets.token_bytes(_NONCE_BYTES)
        expires = int(self._clock()) + self.lifetime_seconds
        plain = _EXPIRES.pack(expires) + bookmark.encode("utf-8")
        sealed = self._ciphers[0].encrypt(nonce, plain, _aad(tenant))
        return base64.urlsafe_b64encode(bytes([VERSION]) + nonce + sealed).rstrip(
            b"=").decode("ascii")

    def open(self, text: str, tenant: str, where: str) -> str:
        """The Neo4j bookmark `text` seals for `tenant`; BAD_INPUT naming `where` (e.g.
        "sent in the Ctxdag-Bookmarks header") when it is not one, or has expired."""
        data = _decoded(text)
        if data is None or len(data) < _HEADER_BYTES + _EXPIRES.size + _TAG_BYTES \
                or data[0] != VERSION:
            raise BadInput(f"a bookmark {where} is not one this service hands out "
                           f"(got {text[:40]!r}); send back only the bookmarks a response's "
                           "extensions.bookmarks carried, or none")
        nonce, sealed = data[1:_HEADER_BYTES], data[_HEADER_BYTES:]
        for cipher in self._ciphers:
            try:
                plain = cipher.decrypt(nonce, sealed, _aad(tenant))
                break
            except InvalidTag:
                continue
        else:
            raise BadInput(
                f"a bookmark {where} does not open: it was altered, handed to another tenant, "
                "or sealed by a deployment with another key (every replica must share "
                "CTXDAG_BOOKMARK_KEY; without it each process seals with a key of its own, "
                "lost when it restarts). Send back only the bookmarks this tenant's "
                "responses carried, or none")
        (expires,) = _EXPIRES.unpack_from(plain)
        if self._clock() >= expires:
            raise BadInput(f"a bookmark {where} has expired (a bookmark is good for "
                           f"{self.lifetime_seconds // 3600} hours); send the latest "
                           "response's bookmarks, or none")
        return plain[_EXPIRES.size:].decode("utf-8")


def _aad(tenant: str) -> bytes:
    return _AAD_PREFIX + bytes([VERSION]) + tenant.encode("utf-8")


def _decoded(text: str) -> bytes | None:
    if not _URLSAFE_BASE64.fullmatch(text):
        return None
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
