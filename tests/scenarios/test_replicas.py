"""Scale-out: three `ctxdag serve` processes on one Neo4j. A subscriber on one replica hears
every event of writes made through the others, in order, without gaps or duplicates, and
resumes from its last event after its replica is killed and restarted."""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid

import pytest
import websockets

from service.store import Database
from service.store.events import events_after
from tests.api_client import Client
from tests.service_process import ServiceProcess

EVENTS = """subscription($s: ID!, $a: Int) { sessionEvents(sessionId: $s, after: $a) {
  __typename id seq type ... on NodeAppended { nodeId } ... on HeadMoved { headId } } }"""


@pytest.fixture
def replicas(neo4j_server):
    env = {"NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password,
           "CTXDAG_TENANT": f"replicas-{uuid.uuid4().hex[:8]}",
           "CTXDAG_EVENT_POLL_SECONDS": "0.1"}
    processes = [ServiceProcess(env) for _ in range(3)]
    try:
        for process in processes:
            process.start()
        yield processes
    finally:
        for process in processes:
            process.stop()


class Subscriber:
    """Collects a session's events through one replica, resuming after the last one it got
    whenever the connection drops."""

    def __init__(self, replica: ServiceProcess, session_id: str) -> None:
        self.replica, self.session_id = replica, session_id
        self.received: list[dict] = []
        self.connections = 0

    @property
    def last(self) -> int:
        return self.received[-1]["seq"] if self.received else 0

    async def run(self, until: asyncio.Event) -> None:
        while not until.is_set():
            try:
                await self._connect(until)
            except (OSError, websockets.ConnectionClosed, asyncio.TimeoutError):
                await asyncio.sleep(0.2)  # the replica is down: try again

    async def _connect(self, until: asyncio.Event) -> None:
        url = self.replica.url.replace("http://", "ws://") + "/graphql"
        async with websockets.connect(url, subprotocols=["graphql-transport-ws"],
                                      open_timeout=5) as ws:
            await ws.send(json.dumps({"type": "connection_init", "payload": {}}))
            assert json.loads(await ws.recv())["type"] == "connection_ack"
            self.connections += 1
            await ws.send(json.dumps({"id": "events", "type": "subscribe", "payload": {
                "query": EVENTS, "variables": {"s": self.session_id, "a": self.last}}}))
            while not until.is_set():
                try:
                    message = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
                except asyncio.TimeoutError:
                    continue
                assert message["type"] == "next", message
                self.received.append(message["payload"]["data"]["sessionEvents"])


async def last_seq(neo4j_driver, session_id: str) -> int:
    rows, _, _ = await neo4j_driver.execute_query(
        "MATCH (s:Session {id: $sid}) RETURN s.next_event_seq AS last", sid=session_id)
    return rows[0]["last"]


async def test_a_subscriber_hears_every_replicas_writes_across_its_own_restart(
        replicas, neo4j_driver):
    a, b, c = replicas
    writers = [Client(b.url), Client(c.url)]
    session = (await writers[0]("mutation { createSession(title: \"replicas\") { id } }"))[
        "createSession"]["id"]
    subscriber, done = Subscriber(a, session), asyncio.Event()
    listening = asyncio.create_task(subscriber.run(done))

    async def turns(client: Client, name: str, count: int) -> None:
        for i in range(count):
            await client("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, "
                         "content: $c) { reply { id } } }", s=session, c=f"{name} {i}. " * 20)

    writing = asyncio.gather(turns(writers[0], "via B", 12), turns(writers[1], "via C", 12))
    while subscriber.last < 10:
        await asyncio.sleep(0.05)
    a.process.kill()  # the subscriber's replica dies mid-stream
    a.process.wait(timeout=30)
    killed_at = subscriber.last
    await turns(writers[1], "while A is down", 3)
    await writers[1]("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 200) "
                     "{ status } }", s=session)
    a.start()  # it comes back, and the subscriber resumes after its last event
    await writing
    await turns(writers[0], "after", 2)
    final = await last_seq(neo4j_driver, session)
    async with asyncio.timeout(60):
        while subscriber.last < final:
            await asyncio.sleep(0.05)
    done.set()
    await listening

    seqs = [e["seq"] for e in subscriber.received]
    assert seqs == list(range(1, final + 1))  # none lost, none twice, in order
    assert subscriber.connections >= 2 and 10 <= killed_at < final
    stored = await events_after(Database(neo4j_driver), {session: 0}, 10_000)
    assert [(e["id"], e["type"]) for e in subscriber.received] == [
        (e.id, e.type.upper()) for e in stored]
    assert {"COMPACTION_STARTED", "COMPACTION_FINISHED"} <= {e["type"] for e in subscriber.received}
    check = subprocess.run([sys.executable, "-m", "service.cli", "check", session], env=b.env,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0 and check.stdout.startswith("ok: 1 session checked"), \
        check.stdout + check.stderr


async def test_a_cursor_older_than_retention_is_told_to_reload(neo4j_server):
    env = {"NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password,
           "CTXDAG_TENANT": f"retention-{uuid.uuid4().hex[:8]}", "CTXDAG_EVENT_RETENTION": "5"}
    with ServiceProcess(env) as service:
        client = Client(service.url)
        session = (await client("mutation { createSession { id } }"))["createSession"]["id"]
        for i in range(4):  # 4 events each: appended and HEAD moved, twice
            await client("mutation($s: ID!) { sendMessage(sessionId: $s, content: \"hi\") "
                         "{ reply { id } } }", s=session)
        kept = await client.subscribe(EVENTS, {"s": session, "a": 11}, 5)
        assert [p["data"]["sessionEvents"]["seq"] for p in kept] == [12, 13, 14, 15, 16]
        (refused,) = await client.subscribe(EVENTS, {"s": session, "a": 10}, 1)
        assert refused["errors"][0]["extensions"]["code"] == "EVENTS_EXPIRED", refused
        assert "reload" in refused["errors"][0]["message"]
        (future,) = await client.subscribe(EVENTS, {"s": session, "a": 17}, 1)
        assert future["errors"][0]["extensions"]["code"] == "BAD_INPUT", future
