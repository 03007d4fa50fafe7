"""Page cursors a client made up, over HTTP on every connection: BAD_INPUT naming the
argument, never INTERNAL; a timestamp at the edge of what Neo4j holds still pages."""
import base64
import json
import logging

import httpx
import pytest

from tests.scenarios.conversation import Conversation

SESSIONS = "query($a: String, $b: String, $f: Int, $l: Int) { sessions(first: $f, after: $a," \
           " last: $l, before: $b) { nodes { id } pageInfo { hasNextPage } } }"
MODEL_CALLS = "query($s: ID!, $a: String, $b: String, $f: Int, $l: Int) { session(id: $s) {" \
              " modelCalls(first: $f, after: $a, last: $l, before: $b) { nodes { id } } } }"
READ_BY = "query($n: ID!, $a: String, $b: String, $f: Int, $l: Int) { node(id: $n) {" \
          " ... on Message { readBy(first: $f, after: $a, last: $l, before: $b) { nodes { id } }" \
          " } } }"


def cursor(*fields) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(fields)).encode()).decode()


def raw(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode()


REFUSED = {
    # The driver sends a timestamp as its UTC instant, which must lie in years 1 to 9999.
    "year 1 at +14:00": cursor("0001-01-01T00:00:00+14:00", "ses_x"),
    "year 1 at +00:01": cursor("0001-01-01T00:00:00+00:01", "ses_x"),
    "year 9999 at -14:00": cursor("9999-12-31T23:00:00-14:00", "ses_x"),
    "the last microsecond of 9999 at -00:01": cursor("9999-12-31T23:59:59.999999-00:01", "x"),
    # Neo4j holds offsets of whole minutes within ±18:00.
    "an offset of +23:59": cursor("2020-01-01T00:00:00+23:59", "ses_x"),
    "an offset of -18:01": cursor("2020-01-01T00:00:00-18:01", "ses_x"),
    "an offset with seconds": cursor("2020-01-01T00:00:00+05:30:15", "ses_x"),
    "an offset with a fraction of a second": cursor("2020-01-01T00:00:00+01:00:00.5", "ses_x"),
    "a naive timestamp": cursor("2020-01-01T00:00:00", "ses_x"),
    "a date alone": cursor("2020-01-01", "ses_x"),
    "year 10000": cursor("10000-01-01T00:00:00+00:00", "ses_x"),
    "not ISO": cursor("yesterday", "ses_x"),
    "an empty timestamp": cursor("", "ses_x"),
    "a number for the timestamp": cursor(1700000000, "ses_x"),
    "null for the timestamp": cursor(None, "ses_x"),
    "a number for the id": cursor("2020-01-01T00:00:00+00:00", 5),
    "an empty id": cursor("2020-01-01T00:00:00+00:00", ""),
    "an extra element": cursor("2020-01-01T00:00:00+00:00", "ses_x", "more"),
    "one element": cursor("2020-01-01T00:00:00+00:00"),
    "an object": raw(json.dumps({"at": "2020-01-01T00:00:00+00:00", "id": "ses_x"}).encode()),
    "not base64": "!!!not base64!!!",
    "base64 of no JSON": raw(b"not json"),
    "base64 of bytes that are not UTF-8": raw(b"\xff\xfe\xfd"),
    "an empty cursor": "",
    "a cursor over 4 KiB": cursor("2020-01-01T00:00:00+00:00", "x" * 5000),
}
ACCEPTED = {
    "the first microsecond of year 1 in UTC": cursor("0001-01-01T00:00:00+00:00", "ses_x"),
    "year 1 at -14:00": cursor("0001-01-01T00:00:00-14:00", "ses_x"),
    "the last microsecond of 9999 in UTC": cursor("9999-12-31T23:59:59.999999+00:00", "x"),
    "year 9999 at +14:00": cursor("9999-12-31T23:00:00+14:00", "ses_x"),
    "an offset of +18:00": cursor("2020-01-01T00:00:00+18:00", "ses_x"),
    "an offset of -18:00": cursor("2020-01-01T00:00:00-18:00", "ses_x"),
    "an offset of +05:45": cursor("2020-01-01T00:00:00+05:45", "ses_x"),
}


@pytest.fixture
async def connections(api):
    """Each paged connection: its query and the variables naming what it pages."""
    c = await Conversation.start(api.client, "odd cursors")
    ids = await c.chat(1)
    return {"sessions": (SESSIONS, {}), "Session.modelCalls": (MODEL_CALLS, {"s": c.id}),
            "Message.readBy": (READ_BY, {"n": ids[0]})}


def requests(connections, cursors):
    """Every connection, with the cursor as `after` and as `before`, paging both ways."""
    for where, (query, variables) in connections.items():
        for argument in ("after", "before"):
            for size in ("first", "last"):
                for label, value in cursors.items():
                    yield (f"{where}({size}, {argument}: {label})", argument, query,
                           {**variables, argument[0]: value, size[0]: 2})


async def test_a_made_up_cursor_is_bad_input_naming_its_argument(api, connections, caplog):
    tried = 0
    async with httpx.AsyncClient(base_url=api.url, headers=api.client.headers,
                                 timeout=60) as http:
        for label, argument, query, variables in requests(connections, REFUSED):
            body = (await http.post("/graphql", json={"query": query,
                                                      "variables": variables})).json()
            errors = body.get("errors")
            assert errors, (label, body)
            assert [e["extensions"]["code"] for e in errors] == ["BAD_INPUT"], (label, errors)
            assert f"'{argument}' cursor" in errors[0]["message"], (label, errors)
            tried += 1
    assert tried == 3 * 2 * 2 * len(REFUSED)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text


async def test_a_cursor_at_the_edge_of_what_neo4j_holds_still_pages(api, connections):
    async with httpx.AsyncClient(base_url=api.url, headers=api.client.headers,
                                 timeout=60) as http:
        for label, _, query, variables in requests(connections, ACCEPTED):
            body = (await http.post("/graphql", json={"query": query,
                                                      "variables": variables})).json()
            assert "errors" not in body, (label, body)
