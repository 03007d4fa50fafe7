"""The served API through Apollo Client itself, run by Node (tests/clients/, packages pinned
there and installed once per machine by tests/node_clients.py), as an app uses it.

Apollo Client 3 sends `Accept: */*` with every request and Apollo Client 4
`application/graphql-response+json,application/json;q=0.9`; both are tested."""
import uuid

import pytest

from tests.integration.test_api import new_session
from tests.node_clients import NodeClientUnavailable, run_async

APOLLO = {"apollo3": "3.", "apollo4": "4."}


async def run_client(script: str, packages: str, *args: str) -> dict:
    try:
        return await run_async(script, packages, *args)
    except NodeClientUnavailable as e:
        pytest.fail(str(e), pytrace=False)


@pytest.mark.parametrize("packages", list(APOLLO))
async def test_apollo_sends_persisted_queries_over_get(api, packages):
    """`useGETForHashedQueries`: the hash alone over GET, PERSISTED_QUERY_NOT_FOUND, hash
    and query over POST; a second client's GET of the hash alone is then answered."""
    session = await new_session(api.client, title=f"persisted through {packages}")
    out = await run_client("apollo_persisted.mjs", packages, f"{api.url}/graphql",
                           api.client.token, session["id"], f"Title_{uuid.uuid4().hex}")
    assert out["version"].startswith(APOLLO[packages]), out
    assert "error" not in out, out
    assert [(r["session"]["id"], r["session"]["title"]) for r in out["results"]] == [
        (session["id"], f"persisted through {packages}")] * 2, out
    assert [(r["method"], r["query"]) for r in out["requests"]] == [
        ("GET", False), ("POST", True), ("GET", False)], out
