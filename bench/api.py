"""Workload 9: the service through its API — GraphQL over HTTP, as a client sees it.

The real app (service/api/app.py) is served by uvicorn in this process on a loopback
port, over the bench's own Database (`b.db`, so its statements count in `b.trips()`),
with a bearer token for the bench's tenant — the way tests/conftest.py's `api` fixture
serves it. Requests go through one keep-alive `httpx.AsyncClient`; client and server
share this event loop, so a sample is the whole round trip: HTTP, GraphQL parsing and
validation, the resolvers and their statements, and the JSON both ways.

Each row samples the API call round robin with the same work done directly on the
store (timing.measure_round_robin: one call of each per round, between two blocks of
floor round trips), so its note says what HTTP and GraphQL add in the same run:

- "sendMessage via GraphQL": the `sendMessage` mutation (offline provider) against
  Turns.send_message, each on its own session of `send_history` messages;
- "sendMessageStream over graphql-transport-ws" and "Turns.send_message followed": the
  streamed turn (docs/guides/agent-runtimes.md, "Streaming") beside today's, four ways in
  one round robin, each on its own session: the subscription over one kept-open websocket
  (every event read, TurnDone last) against the `sendMessage` mutation over HTTP, and in
  process the turn followed as the subscription follows it (a TurnFollower on a
  RunningTurns task, every event read) against Turns.send_message — so the notes give the
  same-run ratios of what streaming adds at both levels;
- "GraphQL session.graph": a session's capsule graph, every GraphNode field a UI draws,
  on a 1,000-message session with one compaction, against the two store reads the
  resolvers make (sessions.get_many, views.graph_many).

To add a row, write an async function taking the Bench and put it in API_WORKLOADS.
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import uuid
from typing import Any, AsyncIterator, Awaitable, Callable

import httpx
import uvicorn
import websockets

from service.api.app import create_app
from service.api.server import server_config
from service.config import Settings
from service.context.compaction import CompactionStatus
from service.neo4j_local import free_port
from service.turns.streaming import RunningTurns, TurnFollower

from .content import user_text
from .core import Bench
from .timing import Stats, measure_round_robin

S9 = "9 API (GraphQL)"

Workload = Callable[[Bench], Awaitable[None]]

GRAPH_MESSAGES = 1_000
WARMUP = 10

SEND = """
mutation Send($sessionId: ID!, $content: String!) {
  sendMessage(sessionId: $sessionId, content: $content) {
    reply { id }
    callId
    errorCode
    error
  }
}"""

SEND_STREAM = """
subscription Stream($sessionId: ID!, $content: String!) {
  sendMessageStream(sessionId: $sessionId, content: $content) {
    __typename
    ... on ReplyTextDelta { call index text }
    ... on TurnDone { turn { reply { id } callId errorCode error } }
  }
}"""

GRAPH = """
query Graph($id: ID!) {
  session(id: $id) {
    id
    headId
    graph {
      nodes {
        id role seq predecessorId callerId isHead coversIds supersededSummary retired
      }
    }
  }
}"""


@contextlib.asynccontextmanager
async def served(b: Bench) -> AsyncIterator[httpx.AsyncClient]:
    """The app on a free loopback port over `b.db`; yields a client holding the token."""
    async with _served(b) as (http, _):
        yield http


@contextlib.asynccontextmanager
async def _served(b: Bench) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    """The app on a free loopback port over `b.db`; yields a client holding the token."""
    token = f"bench-{uuid.uuid4().hex}"
    settings = Settings.from_env({"CTXDAG_TENANT": b.tenant,
                                  "CTXDAG_API_TOKENS": f"{token}={b.tenant}"})
    port = free_port()
    server = uvicorn.Server(server_config(create_app(settings, b.db), settings, "127.0.0.1",
                                          port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.05)
        headers = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60,
                                     headers=headers) as http:
            yield http, lambda: websockets.connect(
                f"ws://127.0.0.1:{port}/graphql", subprotocols=["graphql-transport-ws"],
                additional_headers=headers, max_size=None)
    finally:
        server.should_exit = True
        await task


async def graphql(http: httpx.AsyncClient, query: str, **variables: Any) -> dict:
    response = await http.post("/graphql", json={"query": query, "variables": variables})
    body = response.json()
    if response.status_code != 200 or body.get("errors"):
        raise RuntimeError(f"GraphQL answered {response.status_code}: "
                           f"{body.get('errors') or body}"[:500])
    return body["data"]


async def versus(b: Bench, label: str, api: Callable[[], Awaitable[Any]],
                 store: Callable[[], Awaitable[Any]]) -> tuple[Stats, Stats, Stats, dict]:
    """The API call and its store-level counterpart, round robin: (api, store, floor,
    round trips per call of each)."""
    trips = {"api": 0, "store": 0}

    def counted(name: str, fn: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[None]]:
        async def call() -> None:
            before = b.trips()
            await fn()
            trips[name] += b.trips() - before
        return call

    samples = 30 if b.quick else 100
    stats, base = await measure_round_robin(
        b.driver, {"api": counted("api", api), "store": counted("store", store)},
        samples=samples, warmup=WARMUP)
    b.floors.append({"around": f"{S9} {label} (round robin)", **base.as_dict()})
    per_call = {name: trips[name] / (stats[name].n + WARMUP) for name in trips}
    return stats["api"], stats["store"], base, per_call


async def send_message_via_graphql(b: Bench) -> None:
    history = b.sizes.send_history
    via_api = await b.loader.chain("bench api sendMessage", history)
    direct = await b.loader.chain("bench api send_message", history)
    counter = itertools.count(200_000)  # fresh user texts, apart from workload 3's

    async def store() -> None:
        result = await b.runtime.turns.send_message(direct.session_id, user_text(next(counter)))
        if result.reply is None:
            raise RuntimeError(f"send_message produced no reply: {result.error}")

    async with served(b) as http:
        async def api() -> None:
            turn = (await graphql(http, SEND, sessionId=via_api.session_id,
                                  content=user_text(next(counter))))["sendMessage"]
            if turn["reply"] is None or turn["callId"] is None:
                raise RuntimeError(f"sendMessage produced no reply: {turn}")

        stats, store_stats, base, trips = await versus(b, "sendMessage", api, store)
    for chain in (via_api, direct):
        violations = await b.ledger.violations(chain.session_id)
        if violations:
            raise RuntimeError(f"turns left {chain.session_id} unsound: {violations[:3]}")
    added = stats.p50_ms - store_stats.p50_ms
    b.add(S9, "sendMessage via GraphQL", stats, base, round_trips=round(trips["api"], 2),
          note=f"offline provider; the session starts with {history} messages; same-run "
               f"Turns.send_message p50 {store_stats.p50_ms:.1f} ms (p95 "
               f"{store_stats.p95_ms:.1f}, {trips['store']:.2f} round trips), so HTTP + "
               f"GraphQL add {added:.1f} ms at p50",
          store=store_stats.as_dict(), store_round_trips=trips["store"])
    b.log(f"{S9}: sendMessage p50 {stats.p50_ms:.1f} ms (Turns.send_message "
          f"{store_stats.p50_ms:.1f} ms)")


async def streamed_turns(b: Bench) -> None:
    history = b.sizes.send_history
    chains = {name: await b.loader.chain(f"bench stream {name}", history)
              for name in ("stream", "mutation", "followed", "turn")}
    counter = itertools.count(300_000)  # fresh user texts, apart from the rows above
    turns, running = b.runtime.turns, RunningTurns()
    deltas = {"stream": 0, "followed": 0}

    async def turn() -> None:
        result = await turns.send_message(chains["turn"].session_id, user_text(next(counter)))
        if result.reply is None:
            raise RuntimeError(f"send_message produced no reply: {result.error}")

    async def followed() -> None:
        follower = TurnFollower()
        task = running.start(turns.send_message(chains["followed"].session_id,
                                                user_text(next(counter)), listener=follower))
        async for item in follower.follow(task):
            deltas["followed"] += 1
        if item.reply is None:
            raise RuntimeError(f"the followed turn produced no reply: {item.error}")

    async with _served(b) as (http, connect), connect() as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
        if json.loads(await ws.recv())["type"] != "connection_ack":
            raise RuntimeError("the websocket was not acknowledged")
        operations = itertools.count(1)

        async def stream() -> None:
            op = str(next(operations))
            await ws.send(json.dumps({"id": op, "type": "subscribe", "payload": {
                "query": SEND_STREAM, "variables": {"sessionId": chains["stream"].session_id,
                                                    "content": user_text(next(counter))}}}))
            done = None
            while (message := json.loads(await ws.recv()))["type"] != "complete":
                if message["type"] != "next" or message["payload"].get("errors"):
                    raise RuntimeError(f"sendMessageStream answered {message}"[:500])
                event = message["payload"]["data"]["sendMessageStream"]
                deltas["stream"] += 1
                done = event.get("turn", done)
            if done is None or done["reply"] is None:
                raise RuntimeError(f"sendMessageStream produced no reply: {done}")

        async def mutation() -> None:
            answer = (await graphql(http, SEND, sessionId=chains["mutation"].session_id,
                                    content=user_text(next(counter))))["sendMessage"]
            if answer["reply"] is None:
                raise RuntimeError(f"sendMessage produced no reply: {answer}")

        samples = 30 if b.quick else 100
        stats, base = await measure_round_robin(
            b.driver, {"stream": stream, "mutation": mutation, "followed": followed,
                       "turn": turn}, samples=samples, warmup=WARMUP)
    b.floors.append({"around": f"{S9} streamed turns (round robin)", **base.as_dict()})
    for chain in chains.values():
        violations = await b.ledger.violations(chain.session_id)
        if violations:
            raise RuntimeError(f"turns left {chain.session_id} unsound: {violations[:3]}")
    turns_run = stats["stream"].n + WARMUP
    same = f"sampled round robin with {len(stats)} ways of one turn; the session starts with " \
           f"{history} messages; offline provider, word by word"
    b.add(S9, "sendMessageStream over graphql-transport-ws", stats["stream"], base,
          note=f"{stats['stream'].p50_ms / stats['mutation'].p50_ms:.2f}× the same-run "
               f"sendMessage over HTTP (p50 {stats['mutation'].p50_ms:.1f} ms); "
               f"{deltas['stream'] / turns_run:.0f} events a turn over one kept-open "
               f"websocket; {same}", mutation=stats["mutation"].as_dict())
    b.add(S9, "Turns.send_message followed (streamed, in process)", stats["followed"], base,
          note=f"{stats['followed'].p50_ms / stats['turn'].p50_ms:.2f}× the same-run "
               f"Turns.send_message (p50 {stats['turn'].p50_ms:.1f} ms): a TurnFollower on a "
               f"RunningTurns task, every event read, no GraphQL; {same}",
          turn=stats["turn"].as_dict())
    b.log(f"{S9}: sendMessageStream p50 {stats['stream'].p50_ms:.1f} ms (sendMessage "
          f"{stats['mutation'].p50_ms:.1f} ms); followed turn {stats['followed'].p50_ms:.1f} "
          f"ms (turn {stats['turn'].p50_ms:.1f} ms)")


async def session_graph(b: Bench) -> None:
    chain = await b.loader.chain("bench api graph", GRAPH_MESSAGES)
    compaction = await b.runtime.compactor.compact(chain.session_id)
    if compaction.status is not CompactionStatus.COMPACTED or compaction.summary is None:
        raise RuntimeError(f"the compaction did not compact: {compaction.status} "
                           f"{compaction.message}")
    session_id, summary = chain.session_id, compaction.summary
    ledger = b.ledger
    returned = 0

    async def store() -> None:
        await ledger.sessions.get_many([session_id])
        await ledger.views.graph_many([session_id])

    async with served(b) as http:
        async def api() -> None:
            nonlocal returned
            nodes = (await graphql(http, GRAPH, id=session_id))["session"]["graph"]["nodes"]
            returned = len(nodes)
            capsule = next((n for n in nodes if n["id"] == summary.id), None)
            if capsule is None or len(capsule["coversIds"] or ()) != len(summary.covers_ids):
                raise RuntimeError("session.graph lacks the summary's capsule")

        stats, store_stats, base, trips = await versus(b, "session.graph", api, store)
    b.add(S9, "GraphQL session.graph", stats, base, round_trips=round(trips["api"], 2),
          note=f"{returned:,} graph nodes returned ({GRAPH_MESSAGES:,} messages, one "
               f"compaction covering {len(summary.covers_ids):,}); same-run store reads "
               f"(sessions.get_many + views.graph_many) p50 {store_stats.p50_ms:.1f} ms, so "
               f"HTTP + GraphQL add {stats.p50_ms - store_stats.p50_ms:.1f} ms at p50",
          graph_nodes=returned, covered=len(summary.covers_ids), store=store_stats.as_dict(),
          store_round_trips=trips["store"])
    b.log(f"{S9}: session.graph ({returned} nodes) p50 {stats.p50_ms:.1f} ms (store reads "
          f"{store_stats.p50_ms:.1f} ms)")


API_WORKLOADS: dict[str, Workload] = {
    "sendMessage via GraphQL": send_message_via_graphql,
    "streamed turns": streamed_turns,
    "GraphQL session.graph": session_graph,
}


async def api(b: Bench) -> None:
    for workload in API_WORKLOADS.values():
        await workload(b)
