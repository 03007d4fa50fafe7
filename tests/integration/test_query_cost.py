"""What a request may cost is bounded before it is paid (docs/reference/limits.md):
an operation whose answer may hold more values than CTXDAG_MAX_QUERY_COST
allows is refused before anything runs, and a large answer is encoded off the event loop."""
from __future__ import annotations

import asyncio
import threading

import httpx
import pytest_asyncio

from service.api import encoding
from tests.api_client import socket

TURNS = CALLS = 30
HOSTILE = ("query($i: [ID!]!) { nodes(ids: $i) { ... on Message { readBy(first: 1000) {"
           " nodes { reads { id content } } } } } }")
EVERY_READ = ("query($s: ID!) { session(id: $s) { modelCalls(first: 30) {"
              " nodes { reads { id content } } } } }")


@pytest_asyncio.fixture(scope="module")
async def read_session(api) -> tuple[str, list[str]]:
    """A tenant's own session of 30 turns and 30 recorded calls, each reading every turn."""
    client = api.client
    session = (await client("mutation { createSession(title: \"cost\") { id } }")
               )["createSession"]["id"]
    turns = []
    for i in range(TURNS):
        turns.append((await client(
            "mutation($s: ID!, $r: Role!, $c: String!) { appendMessage(sessionId: $s, "
            "role: $r, content: $c) { id } }", s=session, r="USER" if i % 2 == 0 else
            "ASSISTANT", c=f"Turn {i}: " + "a few words of a conversation " * 6)
        )["appendMessage"]["id"])
    for _ in range(CALLS):
        await client("mutation($s: ID!, $r: [ID!]!) { recordCall(sessionId: $s, readIds: $r,"
                     " model: \"external\") { id } }", s=session, r=turns)
    return session, turns


async def test_a_query_whose_answer_may_be_too_large_is_refused_before_it_runs(api,
                                                                              read_session):
    session, turns = read_session
    ids = turns + [f"nod_absent{i}" for i in range(100 - TURNS)]  # 100 ids, each once
    before = api.db.round_trips.total
    errors = await api.client.errors(HOSTILE, i=ids)
    assert api.db.round_trips.total == before  # nothing ran
    assert [e["extensions"]["code"] for e in errors] == ["BAD_INPUT"]
    assert errors[0]["message"] == (
        "query cost estimate 300,100,200 exceeds the limit 100,000 (CTXDAG_MAX_QUERY_COST): "
        "nodes.readBy.nodes.reads may hold 100,000,000 items: 100 ids × 1,000 readBy page × "
        "1,000 reads of a call; ask for fewer fields, smaller pages or fewer ids")
    assert errors[0]["extensions"]["costEstimate"] == 300_100_200
    assert errors[0]["extensions"]["costLimit"] == 100_000
    async with socket(api.client) as ws:  # the bound does not depend on the transport
        refused = (await ws.execute(HOSTILE, {"i": ids}))[0]
    assert refused["type"] == "error"
    assert refused["payload"][0]["message"] == errors[0]["message"]
    # The same reads, in a page the limit admits, are answered: 30 calls of 30 reads.
    calls = (await api.client(EVERY_READ, s=session))["session"]["modelCalls"]["nodes"]
    assert [[r["id"] for r in c["reads"]] for c in calls] == [turns] * CALLS


async def test_healthz_answers_while_a_large_answer_is_encoded(api, read_session,
                                                              monkeypatch):
    """The encoding of a large answer is held at its end until /healthz has answered; were
    it encoded on the event loop, /healthz could not answer while it is held."""
    started, release, released = threading.Event(), threading.Event(), []
    pieces = encoding.pieces

    def held_at_the_end(value):
        count = size = 0
        for count, piece in enumerate(pieces(value), 1):
            size += len(piece)
            yield piece
        large = count > encoding.ON_LOOP_PIECES or size > encoding.ON_LOOP_CHARS
        if large and not started.is_set():
            started.set()
            released.append(release.wait(30))

    monkeypatch.setattr(encoding, "pieces", held_at_the_end)
    large = asyncio.create_task(api.client(EVERY_READ, s=read_session[0]))
    try:
        assert await asyncio.to_thread(started.wait, 30)
        async with httpx.AsyncClient(timeout=30) as http:
            assert (await http.get(f"{api.url}/healthz")).json()["status"] == "ok"
        assert not large.done()
    finally:
        release.set()
    calls = (await large)["session"]["modelCalls"]["nodes"]
    assert len(calls) == CALLS and released == [True]


REQUESTS = ("query($i: [ID!]!) { nodes(ids: $i) { ... on Session { render {"
            " request(format: ANTHROPIC_MESSAGES) } } } }")
TOOL_USES = 1000  # as many blocks as one message may hold (MAX_BLOCKS)
BLOCKS = ("nodes(ids: $m) { ... on Message { blocks { __typename"
          " ... on ToolUseBlock { id name input } } } }")


async def test_a_render_request_counts_the_values_it_holds(api):
    """A provider request holds its render's messages: 120 sessions' requests may hold
    120,000 values, however few fields the query names."""
    ids = [f"ses_absent{i}" for i in range(120)]
    before = api.db.round_trips.total
    errors = await api.client.errors(REQUESTS, i=ids)
    assert api.db.round_trips.total == before
    assert [e["extensions"]["code"] for e in errors] == ["BAD_INPUT"]
    assert errors[0]["extensions"]["costEstimate"] > errors[0]["extensions"]["costLimit"]


async def test_a_repeated_id_is_answered_and_counted_once(api, read_session):
    session, turns = read_session
    answer = await api.client(REQUESTS, i=[session] * 1000)
    assert len(answer["nodes"]) == 1 and answer["nodes"][0]["render"]["request"]["messages"]
    ids = (await api.client("query($i: [ID!]!) { nodes(ids: $i) { id } }",
                            i=[turns[1], turns[0], turns[1], "nod_absent", turns[0]]))["nodes"]
    assert ids == [{"id": turns[1]}, {"id": turns[0]}, None]


@pytest_asyncio.fixture(scope="module")
async def tool_use_forks(api) -> list[str]:
    """Six replies forked from one question, each calling 1,000 tools at once."""
    client = api.client
    session = (await client("mutation { createSession(title: \"forks\") { id } }")
               )["createSession"]["id"]
    question = (await client("mutation($s: ID!) { appendMessage(sessionId: $s, role: USER, "
                             "content: \"call them all\") { id } }", s=session)
                )["appendMessage"]["id"]
    replies = []
    for fork in range(6):
        blocks = [{"toolUse": {"id": f"toolu_{fork}_{i}", "name": "lookup", "input": {}}}
                  for i in range(TOOL_USES)]
        replies.append((await client(
            "mutation($s: ID!, $p: ID!, $b: [ContentBlockInput!]!) { appendMessage("
            "sessionId: $s, role: ASSISTANT, blocks: $b, predecessorId: $p) { id } }",
            s=session, p=question, b=blocks))["appendMessage"]["id"])
    return replies


async def test_blocks_past_the_assumption_count_as_the_answer_is_built(api, tool_use_forks):
    """A message's blocks are assumed to be a few; one write may store 1,000. What they
    hold is counted as they are resolved: five lookups of six such messages (150,000
    values, estimated at 1,500) are refused whole with the cost error."""
    one = await api.client(f"query($m: [ID!]!) {{ {BLOCKS} }}", m=tool_use_forks)
    assert [len(n["blocks"]) for n in one["nodes"]] == [TOOL_USES] * 6
    aliased = " ".join(f"a{i}: {BLOCKS}" for i in range(5))
    body = await api.client.post(f"query($m: [ID!]!) {{ {aliased} }}", {"m": tool_use_forks})
    assert body["data"] is None
    (error,) = body["errors"]
    assert error["extensions"]["code"] == "BAD_INPUT"
    assert error["extensions"]["costEstimate"] > error["extensions"]["costLimit"] == 100_000
    assert "holds 1,000 blocks of a message where 10 were assumed" in error["message"]
    ids = "nodes(ids: $m) { ... on Message { toolUseIds } }"
    aliased = " ".join(f"a{i}: {ids}" for i in range(20))
    body = await api.client.post(f"query($m: [ID!]!) {{ {aliased} }}", {"m": tool_use_forks})
    assert body["data"] is None and body["errors"][0]["extensions"]["code"] == "BAD_INPUT"
