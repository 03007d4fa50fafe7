"""The served API through the `gql` client library, one test per convention a stock GraphQL
client relies on: introspection, Relay's object identification and cursor connections,
graphql-transport-ws subscriptions, typed variables and enums."""
import asyncio
import contextlib
import itertools
import uuid
from pathlib import Path

import pytest
from gql import Client, GraphQLRequest, gql
from gql.transport.exceptions import TransportQueryError
from gql.transport.httpx import HTTPXAsyncTransport
from gql.transport.websockets import WebsocketsTransport
from gql.utilities import update_schema_enum
from graphql import GraphQLError, build_schema, lexicographic_sort_schema, print_schema

from service.store import Role

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema.graphql"

CREATE_SESSION = gql("mutation($title: String) { createSession(title: $title, "
                     "systemPrompt: \"Be brief.\") { id rootId } }")
SEND_MESSAGE = gql("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) "
                   "{ userNode { id } reply { id } call { id } } }")
SESSIONS = gql("""query($first: Int, $after: String, $last: Int, $before: String) {
  sessions(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id } }
    nodes { id }
    pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
    totalCount
  } }""")
MODEL_CALLS = gql("""query($s: ID!, $first: Int, $after: String, $last: Int, $before: String) {
  session(id: $s) { modelCalls(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id } }
    nodes { id purpose }
    pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
    totalCount
  } } }""")
READ_BY = gql("""query($n: ID!, $first: Int, $after: String) {
  node(id: $n) { ... on Message { readBy(first: $first, after: $after) {
    edges { cursor position node { id } }
    pageInfo { startCursor endCursor hasNextPage hasPreviousPage }
    totalCount
  } } } }""")
SESSION_EVENTS = gql("""subscription($s: ID!) { sessionEvents(sessionId: $s) {
  __typename id type sessionId at
  ... on NodeAppended { nodeId role }
} }""")


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def request(document: GraphQLRequest, **variables) -> GraphQLRequest:
    return GraphQLRequest(document, variable_values=variables)


@contextlib.asynccontextmanager
async def connect(api, token: str, **httpx_args):
    """A gql session over HTTP holding the schema it fetched by introspection (with
    specifiedByURL, which gql leaves out by default and the JSON scalar declares)."""
    transport = HTTPXAsyncTransport(url=f"{api.url}/graphql", headers=bearer(token),
                                    timeout=60, **httpx_args)
    client = Client(transport=transport, fetch_schema_from_transport=True,
                    introspection_args={"specified_by_url": True})
    async with client as session:
        yield session


@pytest.fixture
async def tenant_a(api):
    async with connect(api, api.client.token) as session:
        yield session


@pytest.fixture
async def tenant_b(api):
    async with connect(api, api.other.token) as session:
        yield session


async def new_session(session, title: str = "gql") -> dict:
    return (await session.execute(request(CREATE_SESSION, title=title)))["createSession"]


async def send(session, session_id: str, content: str) -> dict:
    return (await session.execute(request(SEND_MESSAGE, s=session_id, c=content)))["sendMessage"]


def ids(connection: dict) -> list[str]:
    edge_ids = [e["node"]["id"] for e in connection["edges"]]
    assert edge_ids == [n["id"] for n in connection["nodes"]]
    return edge_ids


def flags(connection: dict) -> tuple[bool, bool]:
    info = connection["pageInfo"]
    assert (info["startCursor"], info["endCursor"]) == (
        connection["edges"][0]["cursor"], connection["edges"][-1]["cursor"])
    return info["hasPreviousPage"], info["hasNextPage"]


def normalized(schema) -> str:
    """The schema printed with its types sorted: print_schema keeps the schema's own type
    order, which differs between the file and an introspected schema. gql's introspection
    query cannot ask for isOneOf, so `@oneOf` is left out of both (the served schema's
    one-of inputs are checked by a query of their own)."""
    return print_schema(lexicographic_sort_schema(schema)).replace(" @oneOf {", " {")


async def test_introspection_gives_the_served_schema_and_validates_locally(api):
    sent = []

    async def record(http_request):
        sent.append(http_request)

    async with connect(api, api.client.token, event_hooks={"request": [record]}) as session:
        assert len(sent) == 1
        assert normalized(session.client.schema) == normalized(
            build_schema(SCHEMA_FILE.read_text()))
        with pytest.raises(GraphQLError, match="noSuchField"):
            await session.execute(gql('query { session(id: "ses_x") { noSuchField } }'))
        with pytest.raises(GraphQLError, match="WIZARD"):
            await session.execute(gql('mutation { appendMessage(sessionId: "ses_x", '
                                      'role: WIZARD, content: "x") { id } }'))
        assert len(sent) == 1
        data = await session.execute(gql("query { sessions { totalCount } }"))
        assert isinstance(data["sessions"]["totalCount"], int) and len(sent) == 2
    one_of = await api.client('{ block: __type(name: "ContentBlockInput") { isOneOf }'
                              ' source: __type(name: "MediaSourceInput") { isOneOf } }')
    assert one_of == {"block": {"isOneOf": True}, "source": {"isOneOf": True}}


async def test_node_resolves_every_kind_of_id(tenant_a):
    session = await new_session(tenant_a)
    turn = await send(tenant_a, session["id"], "Which id is which?")
    missing = f"nod_{uuid.uuid4().hex}"
    query = gql("""query($s: ID!, $m: ID!, $c: ID!, $missing: ID!) {
      session: node(id: $s) { __typename id ... on Session { rootId } }
      message: node(id: $m) { __typename id ... on Message { content role } }
      call: node(id: $c) { __typename id ... on ModelCall { purpose outputId } }
      missing: node(id: $missing) { __typename id }
    }""")
    with pytest.raises(TransportQueryError) as caught:
        await tenant_a.execute(request(query, s=session["id"], m=turn["userNode"]["id"],
                                       c=turn["call"]["id"], missing=missing))
    assert caught.value.data == {
        "session": {"__typename": "Session", "id": session["id"], "rootId": session["rootId"]},
        "message": {"__typename": "Message", "id": turn["userNode"]["id"],
                    "content": "Which id is which?", "role": "USER"},
        "call": {"__typename": "ModelCall", "id": turn["call"]["id"], "purpose": "CHAT",
                 "outputId": turn["reply"]["id"]},
        "missing": None,
    }
    [error] = caught.value.errors
    assert error["path"] == ["missing"] and error["extensions"]["code"] == "NOT_FOUND"
    assert missing in error["message"]


async def test_nodes_come_in_the_order_asked_with_null_for_a_missing_id(tenant_a):
    session = await new_session(tenant_a)
    turn = await send(tenant_a, session["id"], "Order, please.")
    asked = [turn["call"]["id"], f"cal_{uuid.uuid4().hex}", turn["reply"]["id"],
             session["id"], turn["userNode"]["id"]]
    data = await tenant_a.execute(request(
        gql("query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }"), ids=asked))
    assert data["nodes"] == [
        {"__typename": "ModelCall", "id": asked[0]},
        None,
        {"__typename": "Message", "id": asked[2]},
        {"__typename": "Session", "id": asked[3]},
        {"__typename": "Message", "id": asked[4]},
    ]


async def test_sessions_page_forwards_and_backwards_newest_first(tenant_b):
    before = (await tenant_b.execute(request(SESSIONS, first=1)))["sessions"]["totalCount"]
    created = [(await new_session(tenant_b, f"page {i}"))["id"] for i in range(5)]

    forwards, after = [], None
    while True:
        page = (await tenant_b.execute(request(SESSIONS, first=2, after=after)))["sessions"]
        has_previous, has_next = flags(page)
        assert (page["totalCount"], has_previous) == (before + 5, after is not None)
        forwards.append(ids(page))
        if not has_next:
            break
        after = page["pageInfo"]["endCursor"]
    listed = list(itertools.chain.from_iterable(forwards))
    assert listed[:5] == created[::-1]
    assert len(listed) == len(set(listed)) == before + 5
    assert [len(p) for p in forwards] == [2] * (len(listed) // 2) + [1] * (len(listed) % 2)

    backwards, cursor = [], None
    while True:
        page = (await tenant_b.execute(request(SESSIONS, last=2, before=cursor)))["sessions"]
        has_previous, has_next = flags(page)
        assert (page["totalCount"], has_next) == (before + 5, cursor is not None)
        backwards.insert(0, ids(page))
        if not has_previous:
            break
        cursor = page["pageInfo"]["startCursor"]
    assert list(itertools.chain.from_iterable(backwards)) == listed
    assert [len(p) for p in backwards] == [len(p) for p in forwards][::-1]


async def test_a_forged_cursor_is_bad_input(tenant_a):
    with pytest.raises(TransportQueryError) as caught:
        await tenant_a.execute(request(SESSIONS, first=2, after="forged"))
    [error] = caught.value.errors
    assert error["extensions"]["code"] == "BAD_INPUT" and "cursor" in error["message"]


async def test_model_calls_page_oldest_first(tenant_a):
    session = await new_session(tenant_a)
    calls = [(await send(tenant_a, session["id"], f"Question {i}."))["call"]["id"]
             for i in range(3)]

    async def page(**window) -> dict:
        data = await tenant_a.execute(request(MODEL_CALLS, s=session["id"], **window))
        connection = data["session"]["modelCalls"]
        assert connection["totalCount"] == 3
        assert {n["purpose"] for n in connection["nodes"]} == {"CHAT"}
        return connection

    first = await page(first=2)
    assert (ids(first), flags(first)) == (calls[:2], (False, True))
    rest = await page(first=2, after=first["pageInfo"]["endCursor"])
    assert (ids(rest), flags(rest)) == (calls[2:], (True, False))
    last = await page(last=2)
    assert (ids(last), flags(last)) == (calls[1:], (True, False))
    earlier = await page(last=2, before=last["pageInfo"]["startCursor"])
    assert (ids(earlier), flags(earlier)) == (calls[:1], (False, True))


async def test_read_by_pages_the_calls_that_read_the_root(tenant_a):
    session = await new_session(tenant_a)
    calls = [(await send(tenant_a, session["id"], f"Question {i}."))["call"]["id"]
             for i in range(3)]

    async def page(**window) -> dict:
        data = await tenant_a.execute(request(READ_BY, n=session["rootId"], **window))
        connection = data["node"]["readBy"]
        assert connection["totalCount"] == 3
        assert {e["position"] for e in connection["edges"]} == {0}
        return connection

    first = await page(first=2)
    assert ([e["node"]["id"] for e in first["edges"]], flags(first)) == (
        calls[:0:-1], (False, True))
    rest = await page(first=2, after=first["pageInfo"]["endCursor"])
    assert ([e["node"]["id"] for e in rest["edges"]], flags(rest)) == (calls[:1], (True, False))


async def until_live(tenant, session_id: str, received: asyncio.Queue) -> None:
    """Changes the session's summary strategy until its event arrives: the subscription is
    registered on the server from then on."""
    for strategy in itertools.cycle(["branch", "rolling"]):
        await tenant.execute(request(
            gql("mutation($s: ID!, $k: String) { updateSession(sessionId: $s, "
                "summaryStrategy: $k) { id } }"), s=session_id, k=strategy))
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.2):
                await received.get()
                return


async def test_session_events_arrive_over_graphql_transport_ws(api, tenant_a):
    session = await new_session(tenant_a)
    transport = WebsocketsTransport(url=api.url.replace("http://", "ws://") + "/graphql",
                                    headers=bearer(api.client.token),
                                    subprotocols=[WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL])
    received: asyncio.Queue = asyncio.Queue()
    async with Client(transport=transport) as socket:
        assert transport.response_headers["Sec-WebSocket-Protocol"] == "graphql-transport-ws"

        async def listen():
            subscription = socket.subscribe(request(SESSION_EVENTS, s=session["id"]))
            async with contextlib.aclosing(subscription):
                async for data in subscription:
                    await received.put(data["sessionEvents"])

        listener = asyncio.create_task(listen())
        try:
            async with asyncio.timeout(30):
                await until_live(tenant_a, session["id"], received)
                turn = await send(tenant_a, session["id"], "Anyone listening?")
                events = []
                while len(events) < 4:
                    event = await received.get()
                    if event["type"] != "SUMMARY_STRATEGY_CHANGED":
                        events.append(event)
        finally:
            listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await listener

    assert [(e["__typename"], e["type"]) for e in events] == [
        ("NodeAppended", "NODE_APPENDED"), ("HeadMoved", "HEAD_MOVED"),
        ("NodeAppended", "NODE_APPENDED"), ("HeadMoved", "HEAD_MOVED")]
    assert [(e["nodeId"], e["role"]) for e in events[::2]] == [
        (turn["userNode"]["id"], "USER"), (turn["reply"]["id"], "ASSISTANT")]
    assert len({e["id"] for e in events}) == 4
    assert {e["sessionId"] for e in events} == {session["id"]} and all(e["at"] for e in events)
    schema = tenant_a.client.schema
    assert (schema.get_type("NodeAppended").fields["role"].type.of_type
            is schema.get_type("Message").fields["role"].type.of_type
            is schema.get_type("Role"))


async def test_enum_variables_are_typed_and_serialized(tenant_a):
    session = await new_session(tenant_a)
    update_schema_enum(tenant_a.client.schema, "Role", Role)
    append = gql("mutation($s: ID!, $role: Role!, $c: String!) { appendMessage(sessionId: $s, "
                 "role: $role, content: $c) { id role content predecessorId } }")
    appended = (await tenant_a.execute(
        request(append, s=session["id"], role=Role.ASSISTANT, c="Said without a model."),
        serialize_variables=True, parse_result=True))["appendMessage"]
    assert appended["role"] is Role.ASSISTANT
    assert (appended["content"], appended["predecessorId"]) == (
        "Said without a model.", session["rootId"])
    as_sent = (await tenant_a.execute(request(
        gql("query($n: ID!) { node(id: $n) { ... on Message { role } } }"), n=appended["id"])))
    assert as_sent == {"node": {"role": "ASSISTANT"}}
