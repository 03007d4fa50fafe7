"""`python -m bench.query_cost --url http://127.0.0.1:8000`: what one costly query holds.

On a tenant's own session of 30 turns with 30 recorded calls, each reading all 30 turns,
runs the issue's hostile query (`nodes(ids)` × `readBy(first: 1000)` × `reads`) and the
largest queries the cost bound admits, each while /healthz is asked every 20 ms, and
prints for each its time, its answer (rows and bytes, or the refusal), and the worst
/healthz latency during it. Run it against a `ctxdag serve` with the default bounds;
nothing is asserted.
"""
from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time

import httpx

TURNS = 30
CALLS = 30

HOSTILE = ("query($i: [ID!]!) { nodes(ids: $i) { ... on Message { readBy(first: 1000) {"
           " nodes { reads { id content } } } } } }")


async def gql(http: httpx.AsyncClient, url: str, query: str, **variables) -> dict:
    body = (await http.post(f"{url}/graphql", json={"query": query, "variables": variables})
            ).json()
    assert not body.get("errors"), body["errors"]
    return body["data"]


async def session_with_calls(http: httpx.AsyncClient, url: str) -> tuple[str, list[str]]:
    """A session of TURNS turns and CALLS recorded calls, each reading every turn."""
    session = (await gql(http, url, "mutation { createSession(title: \"cost\") { id } }")
               )["createSession"]["id"]
    turns = []
    for i in range(TURNS):
        turns.append((await gql(
            http, url, "mutation($s: ID!, $r: Role!, $c: String!) { appendMessage("
            "sessionId: $s, role: $r, content: $c) { id } }", s=session,
            r="USER" if i % 2 == 0 else "ASSISTANT",
            c=f"Turn {i}: " + "words of a conversation " * 8))["appendMessage"]["id"])
    for _ in range(CALLS):
        await gql(http, url, "mutation($s: ID!, $r: [ID!]!) { recordCall(sessionId: $s, "
                  "readIds: $r, model: \"bench\") { id } }", s=session, r=turns)
    return session, turns


def sample_health(url: str, stop, out) -> None:
    """Asks /healthz every 20 ms until `stop`, from its own process: the client reading a
    large answer must not delay the samples."""
    latencies = []
    with httpx.Client(timeout=600) as http:
        while not stop.is_set():
            started = time.perf_counter()
            http.get(f"{url}/healthz")
            latencies.append(time.perf_counter() - started)
            time.sleep(0.02)
    out.put(latencies)


def rows(value: object) -> int:
    """Objects in an answer (each dict counts once)."""
    if isinstance(value, dict):
        return 1 + sum(rows(v) for v in value.values())
    if isinstance(value, list):
        return sum(rows(v) for v in value)
    return 0


async def measure(url: str, label: str, query: str, variables: dict) -> None:
    processes = multiprocessing.get_context("spawn")
    stop, out = processes.Event(), processes.Queue()
    sampler = processes.Process(target=sample_health, args=(url, stop, out))
    sampler.start()
    await asyncio.sleep(2)
    async with httpx.AsyncClient(timeout=600) as http:
        started = time.perf_counter()
        response = await http.post(f"{url}/graphql",
                                   json={"query": query, "variables": variables})
        seconds = time.perf_counter() - started
    await asyncio.sleep(0.2)
    stop.set()
    latencies = out.get()
    sampler.join()
    body = response.json()
    if body.get("errors"):
        outcome = f"{body['errors'][0]['extensions'].get('code')}: " \
                  f"{body['errors'][0]['message'][:110]}"
    else:
        outcome = f"{rows(body['data']):,} objects, {len(response.content) / 1e6:.1f} MB"
    print(f"{label:44} {seconds * 1000:8.0f} ms  healthz worst {max(latencies) * 1000:6.0f} ms"
          f" ({len(latencies)} asked)  {outcome}", flush=True)


MESSAGE = ("id sessionId role content predecessorId callerId forkOf tokens createdAt seq depth"
           " sideBranch deleted metadata")


def queries(turns: list[str], large: str) -> list[tuple[str, str, dict]]:
    ids = [turns[i % TURNS] for i in range(1000)]
    wide = " ".join(f"a{k}: nodes(ids: $i) {{ ... on Message {{ {MESSAGE} }} }}" for k in range(6))
    return [
        ("hostile: 100 ids", HOSTILE, {"i": ids[:100]}),
        ("hostile: 300 ids", HOSTILE, {"i": ids[:300]}),
        ("hostile: 1,000 ids x 20 aliases", "query($i: [ID!]!) { " + " ".join(
            f"a{k}: nodes(ids: $i) {{ ... on Message {{ readBy(first: 1000) {{ nodes {{ reads"
            " { id content } } } } }" for k in range(20)) + " }", {"i": ids}),
        ("admitted: 1,000 ids x readBy(first: 30) x 2", "query($i: [ID!]!) { nodes(ids: $i) {"
         " ... on Message { readBy(first: 30) { nodes { id purpose } } } } }", {"i": ids}),
        ("admitted: 6 aliases x 1,000 ids x 14 fields", f"query($i: [ID!]!) {{ {wide} }}",
         {"i": ids}),
        ("admitted: 100 ids of a 1 MiB message", "query($i: [ID!]!) { nodes(ids: $i) {"
         " ... on Message { content } } }", {"i": [large] * 100}),
    ]


async def main(url: str, only: set[int]) -> None:
    async with httpx.AsyncClient(timeout=600) as http:
        session, turns = await session_with_calls(http, url)
        large = (await gql(http, url, "mutation($s: ID!, $c: String!) { appendMessage("
                           "sessionId: $s, role: USER, content: $c) { id } }", s=session,
                           c="x" * (1024 * 1024 - 1)))["appendMessage"]["id"]
    print(f"session {session}: {TURNS} turns, {CALLS} calls each reading all of them, "
          "and one 1 MiB message")
    for n, (label, query, variables) in enumerate(queries(turns, large), 1):
        if not only or n in only:
            await measure(url, label, query, variables)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--only", default="", help="comma-separated query numbers to run")
    args = parser.parse_args()
    asyncio.run(main(args.url, {int(n) for n in args.only.split(",") if n.strip()}))
