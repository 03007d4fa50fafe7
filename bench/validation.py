"""`python -m bench.validation`: what refusing or validating a hostile document costs.

Runs, in process and without a database, what the service does with a document before
executing it (size check, parse with the token limit, shape measure, graphql-core's
validation, the cost estimate) for adversarial shapes that fit under the request limits,
and prints the worst time of each. Nothing is asserted.
"""
from __future__ import annotations

import time
from typing import Callable, Iterator

from graphql import GraphQLError, get_introspection_query, parse, specified_rules

from service.api.limits import MAX_QUERY_CHARS, MAX_TOKENS, checked, measure, over_limits
from service.api.schema import schema
from service.api.transport import query_too_long
from service.config import Settings

RULES = specified_rules  # what the schema validates with: no extension adds a rule
MAX_QUERY_COST = Settings.from_env({}).max_query_cost
HOSTILE = ("nodes(ids: $i) { ... on Message { readBy(first: 1000) { nodes { reads"
           " { id content } } } } }")
IDS = {"i": [f"nod_{n}" for n in range(1000)]}  # the variables of every document


def bomb(levels: int) -> str:
    fragments = " ".join(f"fragment F{i} on Session{{...F{i + 1} ...F{i + 1}}}"
                         for i in range(levels))
    return f"{{sessions{{nodes{{...F0}}}}}} {fragments} fragment F{levels} on Session{{id}}"


def documents() -> Iterator[tuple[str, str]]:
    yield "fragment bomb, 40 levels (refused)", bomb(40)
    yield "fragment bomb, 9 levels (514 fields, accepted)", bomb(9)
    yield "same field, different arguments x180", "{" + " ".join(
        f'node(id:"{i}"){{id}}' for i in range(180)) + "}"
    yield "conflicting aliases x20 + plain x900", "{sessions{nodes{" + " ".join(
        ("a:title" if i % 2 else "a:id") for i in range(20)) + " id" * 900 + "}}}"
    yield "same field, same arguments x200", "{" + " ".join(
        'node(id:"a"){id}' for _ in range(200)) + "}"
    yield "one fragment spread x450", "{sessions{nodes{" + "...A " * 450 + \
        "}}} fragment A on Session{id title}"
    yield "100 fragments of 9 fields, all spread", "{sessions{nodes{" + " ".join(
        f"...A{i}" for i in range(100)) + "}}} " + " ".join(
        f"fragment A{i} on Session{{id title createdAt updatedAt headId nodeCount "
        "extraMeta root{id}}" for i in range(100))
    yield "inline fragments x300", "{sessions{nodes{" + " ".join(
        "... on Session{id}" for _ in range(300)) + "}}}"
    yield "directives x125", "{sessions{nodes{" + " ".join(
        "id @include(if:true) @skip(if:false)" for _ in range(125)) + "}}}"
    yield "variables x450, unused", "query(" + " ".join(
        f"$v{i}:Int" for i in range(450)) + "){sessions{nodes{id}}}"
    yield "depth 12, wide", "{node(id:\"x\"){" + "children{id role " * 11 + \
        "id" + "}" * 11 + "}}"
    yield "introspection (GraphiQL's query)", get_introspection_query(descriptions=True)
    yield "60 KiB string literal", '{node(id:"' + "x" * 60_000 + '"){id}}'
    yield "64 KiB comment", "#" + "x" * (MAX_QUERY_CHARS - 40) + "\n{sessions{nodes{id}}}"
    yield "70 KiB comment (refused)", "#" + "x" * 70_000 + "\n{sessions{nodes{id}}}"
    yield "1,000 ids x readBy(first: 1000) x reads", "query($i: [ID!]!) { " + HOSTILE + " }"
    yield "the same x 20 aliases", "query($i: [ID!]!) { " + " ".join(
        f"a{k}: {HOSTILE}" for k in range(20)) + " }"


def admit(text: str) -> str:
    """What the service answers before execution: a refusal, errors, or "valid"."""
    refused = query_too_long(text)
    if refused:
        return "refused: query too long"
    try:
        document = parse(text, max_tokens=MAX_TOKENS)
    except GraphQLError as e:
        return f"refused: {e.message[:40]}"
    refused = over_limits(measure(document))
    if refused:
        return f"refused: {refused[:40]}"
    errors = checked(schema._schema, document, RULES, None, IDS, MAX_QUERY_COST)
    if errors and (errors[0].extensions or {}).get("costEstimate"):
        return f"refused: {errors[0].message[:40]}"
    return f"{len(errors)} errors" if errors else "valid"


def worst(fn: Callable[[], object], runs: int = 5) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return max(times)


def main() -> None:
    print(f"{'document':48} {'chars':>7} {'worst ms':>9}  outcome")
    overall = 0.0
    for label, text in documents():
        seconds = worst(lambda: admit(text))
        overall = max(overall, seconds)
        print(f"{label:48} {len(text):7} {seconds * 1000:9.1f}  {admit(text)}")
    print(f"worst of all: {overall * 1000:.1f} ms")


if __name__ == "__main__":
    main()
