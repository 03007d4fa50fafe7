"""Bookmarks as clients hold them (service/api/bookmark_seal.py), over HTTP and websockets
through the real app on the real Neo4j: opaque, bound to their tenant, refused BAD_INPUT
when altered or sealed with another key, and a bookmark the database never reaches fails
UNAVAILABLE within CTXDAG_BOOKMARK_WAIT_SECONDS, without Neo4j's text.

A client can no longer make a bookmark, so the tests make the ones no client could: they
seal them with the key their servers (`keyed`) are configured with.
"""
from __future__ import annotations

import base64
import re
import secrets
import time
import types
import uuid

import neo4j
import pytest_asyncio

from service.api.bookmark_seal import BookmarkSeal
from service.api.bookmarks import HEADER
from service.config import Settings
from service.store import Database
from tests.api_client import Client
from tests.app_server import serve
from tests.integration.test_bookmarks import (
    APPEND, CREATE, READ_SESSION, codes, post, websocket, ws_run,
)

KEY = secrets.token_bytes(32)
WAIT_SECONDS = 2
HANG = 10 * WAIT_SECONDS  # a request that takes longer has not been bounded


def keyed_settings(api, other_token: str, other: str, **extra: str) -> Settings:
    return Settings.from_env({
        "CTXDAG_API_TOKENS": f"{api.client.token}={api.tenant},{other_token}={other}",
        "CTXDAG_BOOKMARK_KEY": base64.b64encode(KEY).decode(), **extra})


@pytest_asyncio.fixture(scope="module")
async def keyed(api, neo4j_driver):
    """A replica configured with CTXDAG_BOOKMARK_KEY=KEY, for `api`'s first tenant (same
    token) and one more; `impatient`, one more replica like it that waits at most 2 s for
    bookmarks (every statement of its operations is bounded until Neo4j starts answering
    it, which on a loaded machine a plan can delay: only the requests that must fail are
    sent to it). `api` has no key configured: its process seals with its own random key."""
    other = f"keyed-{uuid.uuid4().hex[:8]}"
    other_token = f"token-{other}"
    async with serve(keyed_settings(api, other_token, other), Database(neo4j_driver)) as url, \
            serve(keyed_settings(api, other_token, other,
                                 CTXDAG_BOOKMARK_WAIT_SECONDS=str(WAIT_SECONDS)),
                  Database(neo4j_driver)) as impatient_url:
        yield types.SimpleNamespace(client=Client(url, api.client.token), tenant=api.tenant,
                                    other=Client(url, other_token), other_tenant=other,
                                    impatient=Client(impatient_url, api.client.token))


async def neo4j_bookmark(driver: neo4j.AsyncDriver) -> str:
    """A bookmark straight from Neo4j (what clients used to be handed)."""
    manager = neo4j.AsyncGraphDatabase.bookmark_manager()
    await driver.execute_query("RETURN 1", bookmark_manager_=manager)
    (bookmark,) = await manager.get_bookmarks()
    return bookmark


def neo4j_bookmark_bytes(bookmark: str) -> bytes:
    assert bookmark.startswith("FB:"), bookmark
    return base64.b64decode(bookmark[3:] + "=" * (-len(bookmark[3:]) % 4))


def beyond(bookmark: str, ahead: int) -> str:
    """The Neo4j bookmark of the transaction `ahead` after the one `bookmark` names: the
    Neo4j 5 format is packstream [database id as 16 bytes], the transaction id, []."""
    data = neo4j_bookmark_bytes(bookmark)
    assert data[:3] == b"\x91\xcc\x10", data.hex()
    marker, at = data[19], 20
    if marker < 0x80:
        tx = marker
    else:
        size = {0xC8: 1, 0xC9: 2, 0xCA: 4, 0xCB: 8}[marker]
        tx, at = int.from_bytes(data[at:at + size], "big", signed=True), at + size
    forged = data[:19] + b"\xcb" + (tx + ahead).to_bytes(8, "big") + data[at:]
    return "FB:" + base64.b64encode(forged).decode()


def altered(bookmark: str) -> str:
    """`bookmark` with one character in its middle changed (to another base64 digit)."""
    i = len(bookmark) // 2
    return bookmark[:i] + ("B" if bookmark[i] != "B" else "C") + bookmark[i + 1:]


def decodings(text: str) -> list[bytes]:
    """Whatever `text` decodes to as base64 of either alphabet, after any "XX:" prefix."""
    body = text.split(":", 1)[-1]
    found = []
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            found.append(decode(body + "=" * (-len(body) % 4)))
        except ValueError:
            pass
    return found


async def titles(client: Client) -> list[str]:
    listed = await client("query { sessions(first: 100) { nodes { title } } }")
    return [s["title"] for s in listed["sessions"]["nodes"]]


# --- what a client is handed ---------------------------------------------------------


async def test_a_handed_bookmark_shows_nothing_of_the_database(keyed, neo4j_driver):
    """Neither the database's id nor its transaction counter: a bookmark decodes to
    nothing of Neo4j's, two in a row share nothing, and only the key opens them (to the
    Neo4j bookmarks they hold)."""
    database_id = neo4j_bookmark_bytes(await neo4j_bookmark(neo4j_driver))[3:19]
    first = await post(keyed.client, CREATE, {"t": "opaque"})
    sid = first["data"]["createSession"]["id"]
    second = await post(keyed.client, APPEND, {"s": sid, "c": "again"})
    async with websocket(keyed.client) as ws:
        third = await ws_run(ws, APPEND, {"s": sid, "c": "over a socket"})
    assert all("bookmarks" in (b.get("extensions") or {}) for b in (first, second, third)), (
        first, second, third)
    handed = [b for body in (first, second, third) for b in body["extensions"]["bookmarks"]]
    assert len(handed) == 3
    for bookmark in handed:
        assert not bookmark.startswith("FB:"), bookmark
        assert all(database_id not in data for data in decodings(bookmark)), bookmark
    assert len(set(b[:8] for b in handed)) == 3  # a Neo4j bookmark's first 8 never change
    opened = [BookmarkSeal([KEY]).open(b, keyed.tenant, "in a test") for b in handed]
    assert all(neo4j_bookmark_bytes(b)[3:19] == database_id for b in opened)


# --- what a client may send back -----------------------------------------------------


async def test_an_altered_bookmark_is_bad_input_and_nothing_is_written(keyed):
    created = await post(keyed.client, CREATE, {"t": "to alter"})
    (bookmark,) = created["extensions"]["bookmarks"]
    for sent, where in ((altered(bookmark), HEADER), (bookmark[:-4], HEADER),
                        (altered(bookmark), "extensions.bookmarks")):
        title = f"never {uuid.uuid4().hex}"
        if where == HEADER:
            body = await post(keyed.client, CREATE, {"t": title}, bookmarks=sent)
        else:
            body = await post(keyed.client, CREATE, {"t": title},
                              extensions={"bookmarks": [sent]})
        assert codes(body) == ["BAD_INPUT"], body
        message = body["errors"][0]["message"]
        assert "does not open" in message and where in message, message
        assert body.get("data") is None and "bookmarks" not in (body.get("extensions") or {})
        assert title not in await titles(keyed.client)


async def test_a_raw_neo4j_bookmark_is_bad_input(keyed, neo4j_driver):
    body = await post(keyed.client, CREATE, {"t": f"never {uuid.uuid4().hex}"},
                      bookmarks=await neo4j_bookmark(neo4j_driver))
    assert codes(body) == ["BAD_INPUT"], body
    assert "not one this service hands out" in body["errors"][0]["message"]


async def test_another_tenants_bookmark_is_bad_input(keyed):
    """Tenant A's bookmark, sent by tenant B to the same replica: it does not open."""
    created = await post(keyed.client, CREATE, {"t": "tenant a's"})
    bookmarks = created["extensions"]["bookmarks"]
    title = f"never {uuid.uuid4().hex}"
    for query, variables in ((READ_SESSION, {"s": created["data"]["createSession"]["id"]}),
                             (CREATE, {"t": title})):
        body = await post(keyed.other, query, variables, bookmarks=bookmarks)
        assert codes(body) == ["BAD_INPUT"], body
        assert "another tenant" in body["errors"][0]["message"]
    assert title not in await titles(keyed.other)
    # ... and they still work for tenant A
    read = await post(keyed.client, READ_SESSION, {"s": created["data"]["createSession"]["id"]},
                      bookmarks=bookmarks)
    assert read["data"]["session"]["title"] == "tenant a's"


async def test_a_bookmark_sealed_with_another_key_is_bad_input_naming_the_setting(api, keyed):
    """`api` has no CTXDAG_BOOKMARK_KEY (a key of its own), `keyed` has one: a bookmark
    from one does not open on the other (the same tenant), and says why."""
    created = await post(api.client, CREATE, {"t": "sealed elsewhere"})
    sid = created["data"]["createSession"]["id"]
    body = await post(keyed.client, READ_SESSION, {"s": sid},
                      bookmarks=created["extensions"]["bookmarks"])
    assert codes(body) == ["BAD_INPUT"], body
    assert "CTXDAG_BOOKMARK_KEY" in body["errors"][0]["message"]
    back = await post(keyed.client, CREATE, {"t": "the other way"})
    body = await post(api.client, READ_SESSION, {"s": sid},
                      bookmarks=back["extensions"]["bookmarks"])
    assert codes(body) == ["BAD_INPUT"], body


async def test_an_expired_bookmark_is_bad_input(keyed, neo4j_driver):
    day_before = BookmarkSeal([KEY], clock=lambda: time.time() - 2 * 24 * 3600)
    stale = day_before.seal(await neo4j_bookmark(neo4j_driver), keyed.tenant)
    body = await post(keyed.client, CREATE, {"t": f"never {uuid.uuid4().hex}"},
                      bookmarks=stale)
    assert codes(body) == ["BAD_INPUT"], body
    assert "expired" in body["errors"][0]["message"]


async def test_bookmarks_the_database_refuses_are_still_bad_input(keyed):
    """Sealed with the key, so they open, but Neo4j refuses what they hold."""
    sid = (await keyed.client(CREATE, t="refused inside"))["createSession"]["id"]
    for raw in ("garbage", "FB:" + "A" * 40):
        sealed = BookmarkSeal([KEY]).seal(raw, keyed.tenant)
        body = await post(keyed.client, APPEND, {"s": sid, "c": "refused"}, bookmarks=sealed)
        assert codes(body) == ["BAD_INPUT"], body
        assert "Neo4j refused the bookmarks" in body["errors"][0]["message"]
    head = await keyed.client(READ_SESSION, s=sid)
    assert head["session"]["head"] is None or head["session"]["head"]["content"] != "refused"


# --- the wait ------------------------------------------------------------------------


def assert_not_reached(body: dict) -> None:
    assert codes(body) == ["UNAVAILABLE"], body
    message = body["errors"][0]["message"]
    assert f"within {WAIT_SECONDS} s" in message and "CTXDAG_BOOKMARK_WAIT_SECONDS" in message
    # Neo4j's own message names the database's latest transaction ("version"): no number
    # but the wait's may appear.
    assert re.findall(r"\b\d+\b", message) == [str(WAIT_SECONDS)], message
    assert "bookmarks" not in (body.get("extensions") or {})


async def test_a_bookmark_the_database_never_reaches_fails_within_the_wait(keyed, neo4j_driver):
    """A bookmark naming a transaction a billion ahead (as one restored from a later
    backup would): each request fails UNAVAILABLE after the 2 s wait, not after Neo4j's
    30 s and the driver's retries; its message names neither a version nor a transaction."""
    future = BookmarkSeal([KEY]).seal(beyond(await neo4j_bookmark(neo4j_driver), 10**9),
                                      keyed.tenant)
    sid = (await keyed.client(CREATE, t="waited for"))["createSession"]["id"]
    started = time.monotonic()
    read = await post(keyed.impatient, READ_SESSION, {"s": sid}, bookmarks=future,
                      timeout=HANG)
    assert_not_reached(read)
    write = await post(keyed.impatient, APPEND, {"s": sid, "c": "never"},
                       extensions={"bookmarks": [future]}, timeout=HANG)
    assert_not_reached(write)
    async with websocket(keyed.impatient, {"bookmarks": [future]}) as ws:
        over_socket = await ws_run(ws, READ_SESSION, {"s": sid})
    assert_not_reached(over_socket)
    assert time.monotonic() - started < 3 * HANG  # a hang guard, not a timing assertion
    head = await keyed.client(READ_SESSION, s=sid)
    assert head["session"]["head"] is None or head["session"]["head"]["content"] != "never"


# --- over a websocket ----------------------------------------------------------------


async def test_a_websocket_refuses_altered_and_other_tenants_bookmarks(keyed):
    created = await post(keyed.client, CREATE, {"t": "socket's"})
    sid = created["data"]["createSession"]["id"]
    bookmarks = created["extensions"]["bookmarks"]

    async with websocket(keyed.client, {"bookmarks": [altered(bookmarks[0])]}) as ws:
        bad = await ws_run(ws, READ_SESSION, {"s": sid})
    assert codes(bad) == ["BAD_INPUT"], bad
    assert "connection_init" in bad["errors"][0]["message"]

    async with websocket(keyed.client) as ws:
        bad = await ws_run(ws, READ_SESSION, {"s": sid},
                           extensions={"bookmarks": [altered(bookmarks[0])]})
        assert codes(bad) == ["BAD_INPUT"], bad
        good = await ws_run(ws, READ_SESSION, {"s": sid}, extensions={"bookmarks": bookmarks})
        assert good["data"]["session"]["title"] == "socket's"

    async with websocket(keyed.other, {"bookmarks": bookmarks}) as ws:
        bad = await ws_run(ws, CREATE, {"t": "never over a socket"})
    assert codes(bad) == ["BAD_INPUT"] and "another tenant" in bad["errors"][0]["message"]
    assert "never over a socket" not in await titles(keyed.other)
