"""Reads on readers, writes on the leader, and read-your-writes across service replicas
through Neo4j bookmarks the client carries (service/store/db.py, service/api/bookmarks.py).

Everything runs against the real Neo4j. What the service hands the driver is observed by
wrapping `execute_query` of a driver opened for the test, which then runs as usual.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import types
import uuid
from dataclasses import dataclass
from typing import Any, AsyncIterator

import httpx
import neo4j
import pytest
import pytest_asyncio
import websockets

from service.api.bookmarks import HEADER, MAX_BOOKMARK_CHARS, MAX_BOOKMARKS
from service.errors import BadInput
from service.store import Database, Ledger, Limits, open_driver
from service.store.bookmarks import BookmarkScope, bookmark_scope
from service.store.queries import packaged_queries
from tests.api_client import Client
from tests.app_server import serve

READ, WRITE = neo4j.RoutingControl.READ, neo4j.RoutingControl.WRITE
DEFAULT = object()  # execute_query called without bookmark_manager_: the driver's shared one
# Reads sent to the leader on purpose: the schema version apply_schema decides its writes by.
LEADER_READS = {"schema_version_get", "events_after", "session_event_bounds",
                "tool_set_in_force"}  # must be fresh
STATEMENT_NAMES = {q.text: q.name for q in packaged_queries().values()}


@dataclass
class Sent:
    """One execute_query call as the service made it."""

    text: str
    parameters: Any
    routing: neo4j.RoutingControl
    manager: Any
    task: asyncio.Task | None

    @property
    def name(self) -> str | None:
        return STATEMENT_NAMES.get(self.text)

    def mentions(self, value: str) -> bool:
        return value in json.dumps(self.parameters, default=str)


def record(driver: neo4j.AsyncDriver) -> list[Sent]:
    """Every execute_query call on `driver` from now on, in order; the calls run unchanged."""
    sent: list[Sent] = []
    real = driver.execute_query

    async def execute_query(query, parameters=None, *args, **kwargs):
        sent.append(Sent(query, parameters, kwargs.get("routing_", WRITE),
                         kwargs.get("bookmark_manager_", DEFAULT), asyncio.current_task()))
        return await real(query, parameters, *args, **kwargs)

    driver.execute_query = execute_query
    return sent


def routing_uri(uri: str) -> str:
    """The test server's address with the routing scheme (bolt:// -> neo4j://)."""
    scheme, rest = uri.split("://", 1)
    return {"bolt": "neo4j", "bolt+s": "neo4j+s", "bolt+ssc": "neo4j+ssc"}.get(
        scheme, scheme) + "://" + rest


@pytest_asyncio.fixture(scope="module")
async def replica(api, neo4j_server):
    """A second service replica on the same database, with its own driver (recorded) and
    the same tokens as `api`: a client may send each request to either."""
    from service.config import Settings

    driver = open_driver(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    sent = record(driver)
    token = api.client.token
    settings = Settings.from_env({"CTXDAG_API_TOKENS": f"{token}={api.tenant}"})
    async with serve(settings, Database(driver)) as url:
        yield types.SimpleNamespace(url=url, client=Client(url, token), sent=sent)
    await driver.close()


async def post(client: Client, query: str, variables: dict | None = None,
               bookmarks: list[str] | str | None = None, extensions: dict | None = None,
               timeout: float = 60) -> dict:
    """The raw response body; `bookmarks` go in the header (a list is joined by commas)."""
    headers = dict(client.headers)
    if bookmarks is not None:
        headers[HEADER] = bookmarks if isinstance(bookmarks, str) else ",".join(bookmarks)
    body: dict[str, Any] = {"query": query, "variables": variables or {}}
    if extensions is not None:
        body["extensions"] = extensions
    async with httpx.AsyncClient(timeout=timeout) as http:
        response = await http.post(f"{client.base_url}/graphql", headers=headers, json=body)
    return response.json()


CREATE = "mutation($t: String) { createSession(title: $t) { id headId } }"
APPEND = ("mutation($s: ID!, $c: String!) { appendMessage(sessionId: $s, role: USER, "
          "content: $c) { id } }")
READ_SESSION = "query($s: ID!) { session(id: $s) { id title headId head { content } } }"


def codes(body: dict) -> list[str]:
    return [e.get("extensions", {}).get("code") for e in body.get("errors") or []]


def during(sent: list[Sent], start: int) -> list[Sent]:
    return sent[start:]


# --- routing -------------------------------------------------------------------------


async def query_types(driver: neo4j.AsyncDriver, names: set[str]) -> dict[str, str]:
    """What Neo4j says each statement does ("r": reads only), from EXPLAIN (runs nothing)."""
    queries = packaged_queries()
    found = {}
    async with driver.session() as session:
        for name in names:
            query = queries[name]
            result = await session.run("EXPLAIN " + query.text,
                                       query.bind(dict.fromkeys(query.params)))
            found[name] = (await result.consume()).query_type
    return found


async def test_every_statement_reads_on_a_reader_and_writes_on_the_leader(api, replica,
                                                                          neo4j_driver):
    """A workload touching most statements (every mutation, the views, the loaders, the
    schema), then: each statement Neo4j calls read-only ran with READ, every other with
    WRITE, and the round-trip counters say the same."""
    client, start = replica.client, len(replica.sent)
    session = (await client(CREATE, t="routing"))["createSession"]
    sid = session["id"]
    send = ("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) { "
            "userNode { id } reply { id } call { id } } }")
    turns = [(await client(send, s=sid, c=f"message {i}: " + "words " * 60))["sendMessage"]
             for i in range(6)]
    await client("mutation($s: ID!) { updateSession(sessionId: $s, title: \"renamed\") { id } }",
                 s=sid)
    await client("mutation($n: ID!) { retry(nodeId: $n) { reply { id } } }",
                 n=turns[-1]["reply"]["id"])
    edited = (await client("mutation($n: ID!) { editMessage(nodeId: $n, content: \"again\") { "
                           "reply { id } } }", n=turns[-1]["userNode"]["id"]))["editMessage"]
    await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) { id } }",
                 s=sid, n=turns[-1]["reply"]["id"])
    await client("mutation($s: ID!, $n: ID!) { rewind(sessionId: $s, nodeId: $n) { id } }",
                 s=sid, n=turns[-2]["reply"]["id"])
    await client("mutation($s: ID!, $n: ID!) { deleteBranch(sessionId: $s, tipId: $n) { id } }",
                 s=sid, n=edited["reply"]["id"])
    await client("mutation($s: ID!, $n: ID!, $p: String!) { spawnTask(sessionId: $s, "
                 "fromNodeId: $n, prompt: $p) { reply { id } } }",
                 s=sid, n=turns[0]["reply"]["id"], p="look it up")
    await client("mutation($s: ID!, $r: [ID!]!) { recordCall(sessionId: $s, readIds: $r, "
                 "model: \"m\", output: \"done\") { id } }", s=sid, r=[turns[0]["reply"]["id"]])
    compacted = (await client("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 10) "
                              "{ status summary { id } } }", s=sid))["compact"]
    assert compacted["status"] == "COMPACTED"
    await client("mutation($id: ID!) { uncompact(summaryId: $id) { restoredSummaryId } }",
                 id=compacted["summary"]["id"])
    await client("""query($s: ID!, $n: ID!, $a: ID!, $b: ID!) {
      sessions(first: 3) { totalCount nodes { id } }
      session(id: $s) { branches { tip { id } summary { id } } render { nodeIds }
        graph(includeDeleted: true) { nodes { id coversIds } }
        modelCalls(first: 5) { totalCount nodes { id reads { id } replay { differs } } } }
      node(id: $n) { ... on Message { children { id } coveredBy { id } readBy(first: 2) {
        totalCount } } }
      nodes(ids: [$n, $a]) { id }
      callDiff(first: $a, second: $b) { addedIds } }""",
                 s=sid, n=turns[0]["userNode"]["id"], a=turns[0]["call"]["id"],
                 b=turns[1]["call"]["id"])
    sent = during(replica.sent, start)
    assert sent, "nothing was recorded"

    named = [s for s in sent if s.name is not None]
    types_ = await query_types(neo4j_driver, {s.name for s in named})
    wrong = sorted({(s.name, types_[s.name], s.routing.value) for s in named
                    if (s.routing is READ) != (types_[s.name] == "r")
                    and s.name not in LEADER_READS})
    assert wrong == [], f"statements routed against what they do (name, type, routing): {wrong}"
    reads = {s.name for s in named if s.routing is READ}
    writes = {s.name for s in named if s.routing is WRITE}
    assert {"render_context", "session_get_many", "node_get_many", "call_get_many",
            "session_graph", "branch_list", "session_list"} <= reads
    assert {"session_create", "append_message", "set_head", "summary_persist",
            "summary_retire", "delete_branch", "session_update"} <= writes
    assert len(named) == len(sent), [s.text[:60] for s in sent if s.name is None]


async def test_schema_and_planning_route_by_what_each_statement_does(neo4j_server,
                                                                      neo4j_driver):
    """apply_schema and plan_statements over the neo4j:// routing scheme: schema commands
    and writes on the leader, the version it decides by read there too, indexes awaited on
    a reader and the leader; planning on the leader, then on a reader."""
    driver = open_driver(routing_uri(neo4j_server.uri), neo4j_server.user,
                         neo4j_server.password)
    sent = record(driver)
    db = Database(driver)
    try:
        assert db.routes
        await db.apply_schema()
        by_name = {}
        for s in sent:
            by_name.setdefault(s.name or "migration", set()).add(s.routing)
        assert by_name["schema_version_get"] == {WRITE}  # decides writes: the leader's
        assert by_name["schema_await_indexes"] == {READ, WRITE}
        assert by_name.get("migration", {WRITE}) == {WRITE}
        assert db.round_trips.by_routing["schema_version_get"] == {"w": 1}

        # Planning opens sessions; record the access mode of each.
        modes: list[str] = []
        real_session = driver.session

        def session(**config):
            modes.append(config.get("default_access_mode", neo4j.WRITE_ACCESS))
            return real_session(**config)

        driver.session = session
        planned = await db.plan_statements()
        assert sorted(planned) == sorted(db.queries)
        assert modes == [neo4j.WRITE_ACCESS, neo4j.READ_ACCESS]
    finally:
        await driver.close()


async def test_planning_on_a_reader_runs_only_statements_that_read(neo4j_server, neo4j_driver):
    driver = open_driver(routing_uri(neo4j_server.uri), neo4j_server.user,
                         neo4j_server.password)
    db = Database(driver)
    run_in_read_mode: list[str] = []
    real_session = driver.session
    text_to_name = STATEMENT_NAMES

    class Watch:
        def __init__(self, inner, mode):
            self.inner, self.mode = inner, mode

        async def __aenter__(self):
            self.session = await self.inner.__aenter__()
            real_begin = self.session.begin_transaction
            mode = self.mode

            async def begin_transaction(*args, **kwargs):
                tx = await real_begin(*args, **kwargs)
                real_run = tx.run

                async def run(text, *a, **k):
                    if mode == neo4j.READ_ACCESS:
                        run_in_read_mode.append(text_to_name[text])
                    return await real_run(text, *a, **k)

                tx.run = run
                return tx

            self.session.begin_transaction = begin_transaction
            return self.session

        async def __aexit__(self, *exc):
            return await self.inner.__aexit__(*exc)

    driver.session = lambda **config: Watch(real_session(**config),
                                            config.get("default_access_mode"))
    try:
        await db.plan_statements()
    finally:
        await driver.close()
    types_ = await query_types(neo4j_driver, set(db.queries))
    reads = {n for n, t in types_.items() if t == "r"}
    # A write is planned on a reader only when its run on nulls stopped before Neo4j said
    # what it does (rolled back all the same): which ones, asked of Neo4j directly.
    unreported = set()
    async with neo4j_driver.session() as session:
        for name in set(db.queries) - reads:
            query = db.queries[name]
            tx = await session.begin_transaction()
            try:
                await (await tx.run(query.text, query.bind(dict.fromkeys(query.params)))
                       ).consume()
            except neo4j.exceptions.ClientError:
                unreported.add(name)
            finally:
                await tx.close()
    assert reads and set(run_in_read_mode) == reads | unreported
    assert len(unreported) < len(set(db.queries) - reads)  # the others are left to the leader


# --- bookmarks over the API ----------------------------------------------------------


async def test_a_mutation_answers_with_bookmarks_another_replica_reads_its_write(api, replica):
    body = await post(api.client, CREATE, {"t": "written on the first replica"})
    assert not body.get("errors"), body
    bookmarks = body["extensions"]["bookmarks"]
    assert bookmarks and all(isinstance(b, str) and b for b in bookmarks)
    sid = body["data"]["createSession"]["id"]

    start = len(replica.sent)
    read = await post(replica.client, READ_SESSION, {"s": sid}, bookmarks=bookmarks)
    assert not read.get("errors"), read
    assert read["data"]["session"]["title"] == "written on the first replica"
    assert read["extensions"]["bookmarks"]  # to hand on to the next request
    used = {id(s.manager) for s in during(replica.sent, start)}
    managers = [s.manager for s in during(replica.sent, start)]
    assert len(used) == 1 and isinstance(managers[0], neo4j.api.AsyncBookmarkManager)

    # and back: a write on the replica, read on the first one with its bookmarks
    appended = await post(replica.client, APPEND, {"s": sid, "c": "from the replica"},
                          bookmarks=read["extensions"]["bookmarks"])
    assert not appended.get("errors"), appended
    again = await post(api.client, READ_SESSION, {"s": sid},
                       bookmarks=appended["extensions"]["bookmarks"])
    assert again["data"]["session"]["head"]["content"] == "from the replica"


async def test_the_same_replica_reads_its_write_with_the_bookmarks(api):
    body = await post(api.client, CREATE, {"t": "same replica"})
    read = await post(api.client, READ_SESSION, {"s": body["data"]["createSession"]["id"]},
                      bookmarks=body["extensions"]["bookmarks"])
    assert read["data"]["session"]["title"] == "same replica"


async def test_bookmarks_may_come_in_extensions(api, replica):
    body = await post(api.client, CREATE, {"t": "via extensions"})
    read = await post(replica.client, READ_SESSION, {"s": body["data"]["createSession"]["id"]},
                      extensions={"bookmarks": body["extensions"]["bookmarks"]})
    assert read["data"]["session"]["title"] == "via extensions"
    assert read["extensions"]["bookmarks"]


async def test_a_query_without_bookmarks_waits_for_nothing(api, replica):
    sid = (await replica.client(CREATE, t="plain"))["createSession"]["id"]
    start = len(replica.sent)
    body = await post(replica.client, READ_SESSION, {"s": sid})
    assert body["data"]["session"]["id"] == sid
    assert "extensions" not in body or "bookmarks" not in body["extensions"]
    sent = during(replica.sent, start)
    assert sent and all(s.manager is None for s in sent)
    assert all(s.routing is READ for s in sent)


async def test_each_mutation_collects_its_bookmarks_in_a_manager_of_its_own(api, replica):
    """Without bookmarks from the client a mutation still gets one manager, made for it:
    its reads after its writes see them on any server, and the response hands them on."""
    sid = (await replica.client(CREATE, t="own manager"))["createSession"]["id"]
    managers = []
    for content in ("one", "two"):
        start = len(replica.sent)
        body = await post(replica.client, APPEND, {"s": sid, "c": content})
        assert body["extensions"]["bookmarks"]
        sent = during(replica.sent, start)
        assert len({id(s.manager) for s in sent}) == 1 and sent[0].manager is not None
        managers.append(sent[0].manager)
    assert managers[0] is not managers[1]


async def test_concurrent_operations_never_share_a_manager(api, replica):
    """Twelve turns at once on one replica, each on its own session: every operation's
    statements share one manager, and no two operations share one."""
    client = replica.client
    sessions = [(await client(CREATE, t=f"concurrent {i}"))["createSession"]["id"]
                for i in range(12)]
    start = len(replica.sent)
    send = ("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) { "
            "reply { id } } }")
    await asyncio.gather(*(client(send, s=sid, c="at once") for sid in sessions))
    sent = during(replica.sent, start)
    by_session: dict[str, set[int]] = {}
    for s in sent:
        owners = [sid for sid in sessions if s.mentions(sid)]
        assert len(owners) == 1, s.text[:80]
        assert s.manager is not None and s.manager is not DEFAULT
        by_session.setdefault(owners[0], set()).add(id(s.manager))
    assert sorted(by_session) == sorted(sessions)
    assert all(len(ids) == 1 for ids in by_session.values())
    assert len(set().union(*by_session.values())) == len(sessions)


@pytest.mark.parametrize("header, extensions, says", [
    ("not a bookmark", None, "characters no bookmark holds"),
    ("FB:" + "A" * MAX_BOOKMARK_CHARS, None, f"at most {MAX_BOOKMARK_CHARS}"),
    (",".join(f"FB:b{i}" for i in range(MAX_BOOKMARKS + 1)), None, f"at most {MAX_BOOKMARKS}"),
    ("FB:\u00e9t\u00e9", None, "characters no bookmark holds"),
    (None, {"bookmarks": "FB:abc"}, "must be a list of strings"),
    (None, {"bookmarks": [42]}, "must be strings"),
    (None, {"bookmarks": [{"b": 1}]}, "must be strings"),
])
async def test_malformed_bookmarks_are_bad_input_and_nothing_is_written(api, header, extensions,
                                                                       says):
    title = f"never {uuid.uuid4().hex}"
    if header is not None and not header.isascii():
        headers = [(b"authorization", f"Bearer {api.client.token}".encode()),
                   (HEADER.encode(), header.encode("latin-1"))]
        async with httpx.AsyncClient(timeout=60) as http:
            body = (await http.post(f"{api.url}/graphql", headers=headers,
                                    json={"query": CREATE, "variables": {"t": title}})).json()
    else:
        body = await post(api.client, CREATE, {"t": title}, bookmarks=header,
                          extensions=extensions)
    assert codes(body) == ["BAD_INPUT"], body
    message = body["errors"][0]["message"]
    assert says in message and (HEADER in message or "extensions.bookmarks" in message), message
    assert body.get("data") is None
    listed = await api.client("query { sessions(first: 50) { nodes { title } } }")
    assert title not in [s["title"] for s in listed["sessions"]["nodes"]]


async def test_bookmarks_no_response_carried_are_bad_input_naming_the_header(api):
    """Refused before they reach Neo4j: they do not open (test_sealed_bookmarks.py has the
    sealed ones Neo4j refuses)."""
    sid = (await api.client(CREATE, t="refused"))["createSession"]["id"]
    for bookmark in ("garbage", "FB:" + "A" * 40):
        body = await post(api.client, READ_SESSION, {"s": sid}, bookmarks=bookmark)
        assert codes(body) == ["BAD_INPUT"], body
        assert HEADER in body["errors"][0]["message"]
        assert "bookmarks" not in (body.get("extensions") or {})  # not handed back
        body = await post(api.client, APPEND, {"s": sid, "c": "refused too"}, bookmarks=bookmark)
        assert codes(body) == ["BAD_INPUT"], body
    head = await api.client(READ_SESSION, s=sid)
    assert head["session"]["head"]["content"] != "refused too"


async def test_an_empty_header_is_no_bookmarks(api, replica):
    sid = (await replica.client(CREATE, t="empty header"))["createSession"]["id"]
    start = len(replica.sent)
    body = await post(replica.client, READ_SESSION, {"s": sid}, bookmarks=",")
    assert body["data"]["session"]["id"] == sid
    assert all(s.manager is None for s in during(replica.sent, start))


# --- websockets ----------------------------------------------------------------------


@contextlib.asynccontextmanager
async def websocket(client: Client, init: dict | None = None) -> AsyncIterator[Any]:
    url = client.base_url.replace("http://", "ws://") + "/graphql"
    async with websockets.connect(url, subprotocols=["graphql-transport-ws"],
                                  additional_headers=client.headers) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": init or {}}))
        assert json.loads(await ws.recv())["type"] == "connection_ack"
        yield ws


async def ws_run(ws, query: str, variables: dict, extensions: dict | None = None) -> dict:
    """The payload of the operation's one `next` (or its `error`)."""
    op = str(uuid.uuid4())
    payload: dict[str, Any] = {"query": query, "variables": variables}
    if extensions is not None:
        payload["extensions"] = extensions
    await ws.send(json.dumps({"id": op, "type": "subscribe", "payload": payload}))
    async with asyncio.timeout(30):
        while True:
            message = json.loads(await ws.recv())
            if message.get("id") != op:
                continue
            if message["type"] == "next":
                return message["payload"]
            if message["type"] == "error":
                return {"errors": message["payload"]}


async def test_websocket_operations_carry_bookmarks(api, replica):
    async with websocket(api.client) as ws:
        created = await ws_run(ws, CREATE, {"t": "over a websocket"})
        assert created["extensions"]["bookmarks"]
    sid = created["data"]["createSession"]["id"]

    # in connection_init, for every operation of the connection
    start = len(replica.sent)
    async with websocket(replica.client, {"bookmarks": created["extensions"]["bookmarks"]}) as ws:
        read = await ws_run(ws, READ_SESSION, {"s": sid})
    assert read["data"]["session"]["title"] == "over a websocket"
    assert read["extensions"]["bookmarks"]
    assert all(s.manager is not None for s in during(replica.sent, start))

    # in one operation's extensions
    async with websocket(replica.client) as ws:
        read = await ws_run(ws, READ_SESSION, {"s": sid},
                            extensions={"bookmarks": created["extensions"]["bookmarks"]})
        assert read["data"]["session"]["id"] == sid and read["extensions"]["bookmarks"]
        bad = await ws_run(ws, READ_SESSION, {"s": sid}, extensions={"bookmarks": "x"})
        assert codes(bad) == ["BAD_INPUT"], bad

    # as GraphiQL sends its Headers tab
    async with websocket(replica.client,
                         {HEADER: ",".join(created["extensions"]["bookmarks"])}) as ws:
        read = await ws_run(ws, READ_SESSION, {"s": sid})
        assert read["data"]["session"]["id"] == sid and read["extensions"]["bookmarks"]
    async with websocket(replica.client, {"bookmarks": [1, 2]}) as ws:
        bad = await ws_run(ws, READ_SESSION, {"s": sid})
        assert codes(bad) == ["BAD_INPUT"] and "connection_init" in bad["errors"][0]["message"]


async def test_a_socket_reads_its_own_mutations_with_their_bookmarks(api, replica):
    """A connection remembers the bookmarks its operations returned: a read after a
    mutation on the same socket waits for it whichever server serves the read."""
    async with websocket(replica.client) as ws:
        created = await ws_run(ws, CREATE, {"t": "socket"})
        sid = created["data"]["createSession"]["id"]
        start = len(replica.sent)
        read = await ws_run(ws, READ_SESSION, {"s": sid})
        assert read["data"]["session"]["title"] == "socket"
        sent = during(replica.sent, start)
        assert sent and all(s.manager is not None for s in sent)
        held = await sent[0].manager.get_bookmarks()
        assert held  # the read's own bookmark now; it started from the mutation's


async def test_a_subscriptions_bookmarks_never_reach_the_event_feed_it_starts(api, replica):
    """A subscription sent with bookmarks waits for them before it reads the session; the
    process-wide event feed it starts (another task) reads without them."""
    created = await post(api.client, CREATE, {"t": "subscribed"})
    sid = created["data"]["createSession"]["id"]
    start = len(replica.sent)
    async with websocket(replica.client,
                         {"bookmarks": created["extensions"]["bookmarks"]}) as ws:
        op = str(uuid.uuid4())
        await ws.send(json.dumps({"id": op, "type": "subscribe", "payload": {
            "query": "subscription($s: ID!) { sessionEvents(sessionId: $s) { type } }",
            "variables": {"s": sid}}}))
        await asyncio.sleep(0.5)
        await api.client(APPEND, s=sid, c="an event")
        async with asyncio.timeout(30):
            while True:
                message = json.loads(await ws.recv())
                if message.get("id") == op and message["type"] == "next":
                    assert "bookmarks" not in (message["payload"].get("extensions") or {})
                    break
    sent = during(replica.sent, start)
    with_manager = [s for s in sent if s.manager is not None]
    assert with_manager, "the subscription's own read had no manager"
    assert len({s.task for s in with_manager}) == 1
    others = [s for s in sent if s.task is not with_manager[0].task]
    assert others and all(s.manager is None for s in others)


# --- the store: scopes, tasks, the routing scheme ------------------------------------


async def test_a_task_spawned_in_a_scope_does_not_use_it_once_the_scope_ends(neo4j_server,
                                                                           tenant):
    driver = open_driver(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    sent = record(driver)
    ledger = Ledger.open(Database(driver), tenant, Limits(), None)
    try:
        go = asyncio.Event()

        async def later():
            await go.wait()
            await ledger.sessions.list(first=1)

        with bookmark_scope(BookmarkScope().start()) as scope:
            await ledger.sessions.list(first=1)
            task = asyncio.create_task(later())
            await asyncio.sleep(0)
        go.set()
        await task
        assert [s.manager for s in sent] == [scope.manager, None]

        # Not shared: only the task that opened it uses it, even while it is open.
        sent.clear()
        with bookmark_scope(BookmarkScope(shared=False).start()) as scope:
            go.clear()
            task = asyncio.create_task(later())
            go.set()
            await task
            await ledger.sessions.list(first=1)
        assert [s.manager for s in sent] == [None, scope.manager]
    finally:
        await driver.close()


async def test_concurrent_scopes_keep_their_own_managers(neo4j_server, tenant):
    driver = open_driver(neo4j_server.uri, neo4j_server.user, neo4j_server.password)
    sent = record(driver)
    ledger = Ledger.open(Database(driver), tenant, Limits(), None)
    try:
        async def unit(i: int) -> tuple[Any, str]:
            with bookmark_scope(BookmarkScope().start()) as scope:
                session = await ledger.sessions.create(f"scope {i}", "system", None, None)
                await asyncio.sleep(0.01 * (i % 3))
                await ledger.sessions.get(session.id)
                return scope.manager, session.id

        results = await asyncio.gather(*(unit(i) for i in range(10)))
        for manager, sid in results:
            mine = [s for s in sent if s.manager is manager]
            assert mine and all(s.mentions(sid) for s in mine)
        assert len({id(m) for m, _ in results}) == 10
    finally:
        await driver.close()


async def test_a_bookmark_scope_reads_its_writes_and_hands_bookmarks_on(neo4j_server, tenant):
    """Over the neo4j:// routing scheme: a write in one scope, its bookmarks into a scope
    on a second driver (another replica), whose read sees it."""
    uri = routing_uri(neo4j_server.uri)
    first = open_driver(uri, neo4j_server.user, neo4j_server.password)
    second = open_driver(uri, neo4j_server.user, neo4j_server.password)
    try:
        writer = Ledger.open(Database(first), tenant, Limits(), None)
        reader = Ledger.open(Database(second), tenant, Limits(), None)
        assert writer.db.routes and reader.db.routes
        await writer.db.apply_schema()
        with bookmark_scope(BookmarkScope().start()) as scope:
            session = await writer.sessions.create("routed", "system", None, None)
            appended = await writer.head.append_message(session.id, "user", "hello")
        handed = await scope.bookmarks()
        assert handed
        with bookmark_scope(BookmarkScope(handed, "sent in a test").start()):
            read = await reader.sessions.get(session.id)
        assert read.head_id == appended.node.id
        assert reader.db.round_trips.by_routing
        assert all(set(counts) == {"r"} for counts in reader.db.round_trips.by_routing.values())

        with bookmark_scope(BookmarkScope(["garbage"], "sent in a test").start()):
            with pytest.raises(BadInput, match="sent in a test"):
                await reader.sessions.get(session.id)
    finally:
        await first.close()
        await second.close()


async def test_the_service_answers_with_neo4j_uri_on_the_routing_scheme(neo4j_server):
    """NEO4J_URI=neo4j://…: the service opens its own routing driver, applies the schema,
    plans on the leader and a reader, and answers writes and reads."""
    from service.config import Settings

    tenant = f"routing-{uuid.uuid4().hex[:8]}"
    settings = Settings.from_env({
        "NEO4J_URI": routing_uri(neo4j_server.uri), "NEO4J_USER": neo4j_server.user,
        "NEO4J_PASSWORD": neo4j_server.password, "CTXDAG_TENANT": tenant,
    })
    async with serve(settings) as url:
        client = Client(url)
        created = await post(client, CREATE, {"t": "over neo4j://"})
        assert not created.get("errors"), created
        sid = created["data"]["createSession"]["id"]
        turn = await client("mutation($s: ID!) { sendMessage(sessionId: $s, content: \"hi\") "
                            "{ reply { id } } }", s=sid)
        read = await post(client, READ_SESSION, {"s": sid},
                          bookmarks=created["extensions"]["bookmarks"])
        assert read["data"]["session"]["headId"] == turn["sendMessage"]["reply"]["id"]
        async with httpx.AsyncClient() as http:
            health = await http.get(f"{url}/healthz")
        assert health.status_code == 200
