"""GraphQL over HTTP at its edges, against the real app served by uvicorn: text that is not
Unicode, methods /graphql does not answer, who gets GraphiQL, persisted queries per tenant."""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from typing import Iterator

import httpx
import pytest
import websockets

from tests.api_client import socket
from tests.integration.test_api import new_session

LONE_SURROGATE = "\\ud800"  # as JSON writes it: half of a UTF-16 pair, no character
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
TITLE = "query Title($id: ID!) { session(id: $id) { id title } }"


def persisted(query: str) -> dict:
    return {"persistedQuery": {"version": 1,
                               "sha256Hash": hashlib.sha256(query.encode()).hexdigest()}}


@contextlib.contextmanager
def server_errors() -> Iterator[list[logging.LogRecord]]:
    """The ERROR records the app and uvicorn log meanwhile (a traceback is one)."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = records.append
    loggers = [logging.getLogger(name) for name in ("uvicorn.error", "ctxdag.api")]
    for logger in loggers:
        logger.addHandler(handler)
    try:
        yield records
    finally:
        for logger in loggers:
            logger.removeHandler(handler)


def assert_coded(response: httpx.Response, status: int, code: str, says: str = "") -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    (error,) = body["errors"]
    assert error["extensions"]["code"] == code and says in error["message"], body
    return error


async def session_count(client) -> int:
    return (await client("{ sessions(first: 1) { totalCount } }"))["sessions"]["totalCount"]


# Text that is not Unicode


async def test_a_lone_surrogate_anywhere_in_a_request_is_bad_input(api):
    """JSON may spell half of a UTF-16 pair (`\\ud800`), or a body may carry its bytes; no
    Unicode text holds one, so it cannot be hashed, stored or sent to Neo4j. Each place a
    request carries text is refused BAD_INPUT, nothing is written and nothing is logged."""
    typename = "{__typename} #" + LONE_SURROGATE
    zeros = {"persistedQuery": {"version": 1, "sha256Hash": "0" * 64}}
    create = "mutation($t: String) { createSession(title: $t) { id } }"
    bodies = {
        "a persisted query": {"query": typename, "extensions": zeros},
        "a plain query": {"query": typename},
        "a variable": {"query": create, "variables": {"t": "x" + LONE_SURROGATE}},
        "a variable's key": {"query": create, "variables": {"t" + LONE_SURROGATE: "x"}},
        "the operation name": {"query": "query A { __typename }",
                               "operationName": "A" + LONE_SURROGATE},
        "extensions": {"query": "{ __typename }", "extensions": {"bookmarks": [LONE_SURROGATE]}},
    }
    before = await session_count(api.client)
    with server_errors() as errors:
        async with httpx.AsyncClient(base_url=api.url, headers=api.client.headers) as http:
            for where, body in bodies.items():
                text = json.dumps(body).replace("\\\\ud800", LONE_SURROGATE)
                assert LONE_SURROGATE in text and "\\\\" not in text
                response = await http.post("/graphql", content=text,
                                           headers={"Content-Type": "application/json"})
                error = assert_coded(response, 400, "BAD_INPUT", "surrogate")
                assert "\\ud800" in error["message"], (where, error)
            raw = json.dumps({"query": create, "variables": {"t": "@"}}).encode()
            response = await http.post("/graphql", content=raw.replace(b"@", b"\xed\xa0\x80"),
                                       headers={"Content-Type": "application/json"})
            assert_coded(response, 400, "BAD_INPUT")
            for param, value in (("variables", '{"t": "x' + LONE_SURROGATE + '"}'),
                                 ("extensions", json.dumps(zeros)[:-2] + ', "x": "'
                                  + LONE_SURROGATE + '"}}')):
                response = await http.get("/graphql", headers={"Accept": "application/json"},
                                          params={"query": "{ __typename }", param: value})
                assert_coded(response, 400, "BAD_INPUT", "surrogate")
    assert [r.getMessage() for r in errors] == []
    assert await session_count(api.client) == before


async def test_a_lone_surrogate_over_a_websocket_is_bad_input(api):
    """A connection_init holding one is refused as one whose token names no tenant is
    (4403); an operation holding one is refused as its own error (the socket stays open)."""
    url = api.url.replace("http://", "ws://") + "/graphql"
    with server_errors() as errors:
        for payload in ('{"Authorization": "Bearer X"}', '{"bookmarks": ["X"]}'):
            async with websockets.connect(url, subprotocols=["graphql-transport-ws"]) as ws:
                await ws.send('{"type": "connection_init", "payload": %s}'
                              % payload.replace("X", LONE_SURROGATE))
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await ws.recv()
                assert closed.value.rcvd.code == 4403, payload
        async with socket(api.client) as ws:
            for where, query, variables in (
                    ("query", "{ __typename } #X", {}),
                    ("variable", "query($id: ID!) { node(id: $id) { id } }", {"id": "X"})):
                await ws.send_raw(json.dumps({"id": where, "type": "subscribe", "payload": {
                    "query": query, "variables": variables}}).replace("X", LONE_SURROGATE))
                answer = json.loads(await ws.ws.recv())
                assert answer["type"] == "error" and answer["id"] == where, answer
                (error,) = answer["payload"]
                assert error["extensions"]["code"] == "BAD_INPUT", answer
                assert "surrogate" in error["message"], answer
            assert (await ws.execute("{ __typename }"))[0]["type"] == "next"
    assert [r.getMessage() for r in errors] == []


async def test_a_surrogate_pair_is_a_character_and_is_kept(api):
    """Only an unpaired half is refused: a pair spelled in JSON escapes is one character."""
    body = ('{"query": "mutation($t: String) { createSession(title: $t) { title } }", '
            '"variables": {"t": "smile \\ud83d\\ude00"}}')
    async with httpx.AsyncClient(headers=api.client.headers) as http:
        response = await http.post(f"{api.url}/graphql", content=body,
                                   headers={"Content-Type": "application/json"})
    assert response.json()["data"]["createSession"]["title"] == "smile \N{GRINNING FACE}"


# Methods


@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE", "OPTIONS"])
async def test_a_method_graphql_does_not_answer_is_refused_like_every_other_refusal(
        api, method):
    """Coded JSON and the methods that are answered (a CORS preflight, OPTIONS with Origin
    and Access-Control-Request-Method, is answered by the guards: test_cors.py)."""
    async with httpx.AsyncClient(headers=api.client.headers) as http:
        response = await http.request(method, f"{api.url}/graphql", json={"query": "{ __typename }"})
    assert_coded(response, 405, "BAD_INPUT", f"{method} is not answered")
    assert response.headers["allow"] == "GET, POST"


async def test_head_and_unknown_paths_answer_coded_json_too(api):
    async with httpx.AsyncClient(headers=api.client.headers) as http:
        head = await http.head(f"{api.url}/graphql")
        missing = await http.get(f"{api.url}/nothing-here")
        healthz = await http.post(f"{api.url}/healthz")
    assert head.status_code == 405 and head.headers["allow"] == "GET, POST"
    assert_coded(missing, 404, "NOT_FOUND", "nothing is served at this path")
    assert_coded(healthz, 405, "BAD_INPUT", "POST is not answered")
    assert healthz.headers["allow"] == "GET"


# Who gets GraphiQL


async def get(api, params: dict | None = None, accept: str | None = None) -> httpx.Response:
    """GET /graphql with this Accept header; None: with none at all."""
    async with httpx.AsyncClient(headers=api.client.headers) as http:
        request = http.build_request("GET", f"{api.url}/graphql", params=params)
        if accept is None:
            del request.headers["accept"]
        else:
            request.headers["accept"] = accept
        return await http.send(request)


async def test_graphiql_is_served_only_to_a_get_asking_for_html_without_an_operation(api):
    for accept in (BROWSER_ACCEPT, "text/html", "TEXT/HTML; q=0.5, application/json"):
        page = await get(api, accept=accept)
        assert page.status_code == 200, accept
        assert page.headers["content-type"].startswith("text/html"), accept
    # curl's default (*/*), no Accept at all, or HTML refused: the missing query is said.
    for accept in ("*/*", None, "application/json", "text/html;q=0, */*"):
        assert_coded(await get(api, accept=accept), 400, "BAD_INPUT", "No GraphQL query")


async def test_a_persisted_query_over_get_is_answered_whatever_the_accept_header(api):
    """Apollo's `useGETForHashedQueries` sends the hash alone, with Accept: */* (Apollo
    Client 3; tests/integration/test_apollo_client.py runs it); curl sends */* too."""
    session = (await new_session(api.client, title="get"))["id"]
    query = TITLE + " # over GET"
    params = {"variables": json.dumps({"id": session})}
    async with httpx.AsyncClient(headers=api.client.headers) as http:
        registered = await http.post(f"{api.url}/graphql", json={
            "query": query, "variables": {"id": session}, "extensions": persisted(query)})
    assert registered.json()["data"]["session"]["title"] == "get"
    for accept in ("*/*", None, BROWSER_ACCEPT, "text/html"):
        response = await get(api, {**params, "extensions": json.dumps(persisted(query))}, accept)
        assert response.status_code == 200, (accept, response.text[:200])
        assert response.json() == registered.json(), accept
        unknown = await get(api, {**params, "extensions": json.dumps(persisted(query + " "))},
                            accept)
        assert_coded(unknown, 200, "PERSISTED_QUERY_NOT_FOUND")
        with_query = await get(api, {**params, "query": query}, accept)
        assert with_query.json() == registered.json(), accept


# Persisted queries per tenant


async def test_a_persisted_query_is_known_only_to_the_tenant_that_sent_it(api):
    """Whether a hash is known would otherwise tell one tenant that another sent that
    exact text. Requests without a valid token remember nothing for anyone."""
    query = "query Mine { sessions(first: 1) { totalCount } } # tenant A's text"
    hash_only = {"extensions": persisted(query)}
    both = {"query": query, **hash_only}
    async with httpx.AsyncClient(base_url=api.url) as http:
        async def post(client, body):
            return await http.post("/graphql", json=body, headers=client.headers)

        assert (await post(api.client, both)).json()["data"]["sessions"]["totalCount"] >= 0
        assert (await post(api.client, hash_only)).json()["data"]["sessions"]
        assert_coded(await post(api.other, hash_only), 200, "PERSISTED_QUERY_NOT_FOUND")
        assert_coded(await post(api.anonymous, hash_only), 200, "PERSISTED_QUERY_NOT_FOUND")

        anonymous = "{ __typename } # sent without a token"
        sent = await post(api.anonymous, {"query": anonymous, "extensions": persisted(anonymous)})
        assert sent.json()["data"] == {"__typename": "Query"}
        for client in (api.anonymous, api.client, api.other):
            assert_coded(await post(client, {"extensions": persisted(anonymous)}), 200,
                         "PERSISTED_QUERY_NOT_FOUND")


# Refusals that name what a client sent


@pytest.mark.parametrize("path", ["/graphql/static/", "/ui/assets/", "/"])
async def test_a_path_nothing_is_served_at_is_not_echoed(api, path):
    """A 404 names no part of the path (markup in it would come back), and says its body is
    what its type says (nosniff)."""
    markup = "%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E.js"
    async with httpx.AsyncClient(headers=api.client.headers) as http:
        missing = await http.get(f"{api.url}{path}{markup}")
        posted = await http.post(f"{api.url}/graphql/static/{markup}")
    assert_coded(missing, 404, "NOT_FOUND")
    assert_coded(posted, 405, "BAD_INPUT", "POST is not answered")
    for response in (missing, posted):
        assert "onerror" not in response.text and "<img" not in response.text, response.text
        assert response.headers["x-content-type-options"] == "nosniff"


async def test_a_mutation_over_get_is_refused_alike_whatever_it_accepts(api):
    """A stream asked by Accept changes how the answer is sent, not whether a GET may
    mutate: the refusal is the plain GET's, and nothing is written."""
    before = await session_count(api.client)
    params = {"query": "mutation { createSession(title: \"by GET\") { id } }"}
    answers = []
    async with httpx.AsyncClient(headers=api.client.headers) as http:
        for accept in ("application/json", "multipart/mixed;subscriptionSpec=1.0",
                       "multipart/mixed"):
            answers.append(await http.get(f"{api.url}/graphql", params=params,
                                          headers={"accept": accept}))
    plain = assert_coded(answers[0], 405, "BAD_INPUT", "mutations are not allowed")
    for answer in answers[1:]:
        assert assert_coded(answer, 405, "BAD_INPUT") == plain
    assert await session_count(api.client) == before
