"""The GraphQL API over HTTP, end to end, against real Neo4j."""
import asyncio

import httpx

from tests.api_client import GraphQLErrors

NODE = "id role content predecessorId callerId tokens createdAt"
SESSION = f"""id title headId rootId extraMeta
  head {{ {NODE} }} root {{ {NODE} }}
  branches {{ tip {{ id content }} isHead holdsHead length }}"""


async def new_session(client, title="api", system="You are terse."):
    data = await client("mutation($t: String, $s: String) { createSession(title: $t, "
                        f"systemPrompt: $s) {{ {SESSION} }} }}", t=title, s=system)
    return data["createSession"]


async def send(client, session_id, content):
    data = await client(
        "mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) {"
        " userNode { id } reply { id content } call { id readIds purpose } error errorCode"
        " compaction { status } } }", s=session_id, c=content)
    return data["sendMessage"]


async def test_healthz_reports_neo4j(api):
    async with httpx.AsyncClient() as http:
        response = await http.get(f"{api.url}/healthz")
    assert response.status_code == 200
    assert response.json()["neo4j"].startswith("Neo4j/5.26")


async def test_graphiql_is_served_to_browsers(api):
    async with httpx.AsyncClient() as http:
        response = await http.get(f"{api.url}/graphql", headers={"Accept": "text/html"})
    assert response.status_code == 200 and "graphiql" in response.text.lower()


async def test_create_session_and_chat(api):
    client = api.client
    session = await new_session(client)
    assert session["head"]["role"] == "SYSTEM" and session["head"]["content"] == "You are terse."
    assert session["branches"] == [{"tip": {"id": session["rootId"], "content": "You are terse."},
                                    "isHead": True, "holdsHead": True, "length": 1}]
    turn = await send(client, session["id"], "Hello!")
    assert turn["error"] is None and turn["call"]["purpose"] == "CHAT"
    assert turn["call"]["readIds"] == [session["rootId"], turn["userNode"]["id"]]
    data = await client("query($id: ID!) { session(id: $id) { headId render { nodeIds "
                        "summaryId tokens nodes { role } } } }", id=session["id"])
    rendered = data["session"]["render"]
    assert data["session"]["headId"] == turn["reply"]["id"]
    assert [n["role"] for n in rendered["nodes"]] == ["SYSTEM", "USER", "ASSISTANT"]
    assert rendered["summaryId"] is None and rendered["tokens"] > 0
