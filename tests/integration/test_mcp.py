"""`ctxdag mcp` and /mcp through the MCP SDK's own client: the four tools over stdio (the
command as a subprocess, on the test's tenant) and over streamable HTTP (the service,
a bearer token naming the tenant)."""
from __future__ import annotations

import contextlib
import json
import os
import sys
import uuid

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from service.config import Settings
from service.store import Database, Ledger, Limits
from tests.app_server import serve
from tests.integration.helpers import KEEP_FOUR, chat, make_compactor, turns

SECRET = "The deploy key for staging is ZEBRA-4417."


async def planted(ledger: Ledger):
    """A session whose early turn holds SECRET, compacted so a summary covers it, and a
    model call on top (its reads are what `trace` shows)."""
    from service.turns.providers import OfflineProvider
    from service.turns.service import Turns

    session = await ledger.sessions.create("mcp planted", "sys")
    early = await chat(ledger, session, SECRET, *turns(9, start=1))
    summary = (await make_compactor(ledger).compact(
        session.id, keep_recent_tokens=KEEP_FOUR)).summary
    assert early[0].id in summary.covers_ids
    sent = await Turns(ledger, make_compactor(ledger), OfflineProvider()).send_message(
        session.id, "What did we say about staging?")
    return session, early[0], summary, sent.call_id


async def called(client: ClientSession, tool: str, **arguments) -> dict:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def refused(client: ClientSession, tool: str, **arguments) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert result.structured_content["error"]["code"] == result.content[0].text.split(":")[0]
    return result.content[0].text


async def assert_the_four_tools_answer(client: ClientSession, ledger: Ledger):
    """Returns the planted session."""
    session, secret, summary, call_id = await planted(ledger)
    listed = await client.list_tools()
    assert {t.name for t in listed.tools} == {"search", "expand", "render", "trace"}

    found = {h["node_id"]: h for h in (await called(client, "search",
                                                     query="ZEBRA-4417"))["hits"]}
    hit = found[secret.id]
    assert (hit["state"], hit["summary_id"], hit["session_id"]) == (
        "summarized", summary.id, session.id)
    assert set(found) <= {secret.id, summary.id}  # the extractive summary may quote it
    assert (await called(client, "search", query="ZEBRA-4417", roles=["assistant"]))[
        "hits"] == []

    pages, cursor = [], None
    while True:
        page = await called(client, "expand", summary_id=summary.id, budget_tokens=60,
                            **({"cursor": cursor} if cursor else {}))
        pages.append(page)
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(pages) > 1
    assert [t["id"] for p in pages for t in p["turns"]] == list(summary.covers_ids)
    assert pages[0]["turns"][0]["text"] == SECRET  # verbatim

    rendered = await called(client, "render", session_id=session.id)
    view = await ledger.views.render(session.id)
    assert [n["id"] for n in rendered["nodes"]] == list(view.node_ids)
    assert rendered["summary_ids"] == [summary.id]
    assert SECRET not in [n["text"] for n in rendered["nodes"]]

    traced = await called(client, "trace", call_id=call_id)
    call = await ledger.calls.get(call_id)
    assert [n["id"] for n in traced["read"]] == list(call.read_ids)
    assert traced["call"]["session_id"] == session.id and traced["today_differs"] is False

    assert (await refused(client, "render", session_id="no-such-session")).startswith(
        "NOT_FOUND: ")
    assert (await refused(client, "search", query="x", roles=["nobody"])).startswith(
        "BAD_INPUT: ")
    assert (await refused(client, "expand", summary_id=summary.id, cursor="nonsense")
            ).startswith("BAD_INPUT: ")
    return session


async def test_ctxdag_mcp_serves_the_tools_over_stdio(neo4j_server, ledger, tenant):
    env = {"NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password, "CTXDAG_TENANT": tenant,
           "ANTHROPIC_API_KEY": "", "PYTHONPATH": os.getcwd()}
    command = StdioServerParameters(command=sys.executable, args=["-m", "service.cli", "mcp"],
                                    env=env)
    async with stdio_client(command) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        await assert_the_four_tools_answer(client, ledger)


@contextlib.asynccontextmanager
async def mcp_over_http(url: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers) as http, \
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as client:
        await client.initialize()
        yield client


@pytest.fixture
async def service(neo4j_driver, tenant):
    """The service with tokens for the test's tenant and another."""
    run = uuid.uuid4().hex[:8]
    tokens = {"mine": f"token-a-{run}", "theirs": f"token-b-{run}"}
    settings = Settings.from_env({"CTXDAG_API_TOKENS": f"{tokens['mine']}={tenant},"
                                                       f"{tokens['theirs']}=other-{run}"})
    async with serve(settings, Database(neo4j_driver)) as url:
        yield url, tokens


async def test_the_service_serves_the_tools_at_mcp_for_the_tokens_tenant(service, ledger):
    url, tokens = service
    async with mcp_over_http(url, tokens["mine"]) as client:
        session = await assert_the_four_tools_answer(client, ledger)
    async with mcp_over_http(url, tokens["theirs"]) as client:
        assert (await called(client, "search", query="ZEBRA-4417"))["hits"] == []
        assert (await refused(client, "render", session_id=session.id)).startswith(
            "NOT_FOUND: ")


async def test_mcp_without_a_valid_token_is_refused_as_graphql_refuses_it(service):
    url, _ = service
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        async with httpx2.AsyncClient() as http:
            answer = await http.post(f"{url}/mcp", json=body, headers={
                **headers, "Accept": "application/json, text/event-stream"})
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert answer.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    with pytest.raises(ExceptionGroup) as refusal:  # the SDK's client: initialize fails
        async with mcp_over_http(url, "not-a-token"):
            pass
    assert refusal.group_contains(MCPError)


async def test_mcp_opens_no_event_stream_a_get_is_405(service):
    """The tools never speak first; a stream held open would hold the server's shutdown."""
    url, tokens = service
    async with httpx2.AsyncClient(timeout=30) as http:
        answer = await http.get(f"{url}/mcp", headers={
            "Authorization": f"Bearer {tokens['mine']}", "Accept": "text/event-stream"})
    assert (answer.status_code, answer.headers["allow"]) == (405, "POST")
