"""Random agent conversations: no render ever holds an orphan tool_result or an unanswered
tool_use, whatever the moves and compactions.

Hypothesis draws a whole list of moves; the test plays them over the public GraphQL API (the
real app on the real store, pytest-asyncio running each example in the test loop) with an
`AgentDag` (tests/scenarios/agent_dag.py), which checks after every step every live tip and
HEAD: the render against an independent model, the tool uses it leaves open, its provider
requests (refused while tool uses are open, otherwise valid Anthropic and OpenAI bodies),
and the ledger's invariants. A move the tool-pair rule forbids (a deliberately wrong set of
results, a message after open tool uses, a used tool use id) must be refused with BAD_INPUT
and change nothing. Each move is a kind and two numbers that pick among what the session
holds when it is played, so every list is playable, and a move a failure does not need
shrinks to "nothing"; on failure the steps as played are printed. The events (hypothesis'
statistics) count each kind of move done, refused, skipped or not applicable.
"""
from __future__ import annotations

from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from service.store import Ledger, Limits
from tests.scenarios.agent_dag import TOOL, AgentDag

# Repeated kinds are drawn more often: tool runs and compactions are where pairs break.
# "nothing" comes first, so a move that does not matter shrinks to it.
KINDS = ("nothing", "user", "assistant", *["tools"] * 3, *["results"] * 3, *["send"] * 2,
         *["submit"] * 2, "cancel", "retry", "edit", "checkout", "rewind", "delete",
         *["compact"] * 3, "uncompact", "strategy")
KEEPS = (0, 5, 20, 50, 120, 100_000)
MOVES = st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 255), st.integers(0, 255)),
                 min_size=20, max_size=30)


def pick(items: list, n: int):
    return items[n % len(items)] if items else None


def answer_set(d: AgentDag, a: int, b: int) -> tuple[list[str], set[str]]:
    """Results for HEAD: usually exactly its open tool uses (rotated, some failed), else a
    deliberately wrong set (one missing, a stray id, an id another message used)."""
    opened = d.open_at(d.head)
    if opened and a % 4:
        k = b % len(opened)
        answers = opened[k:] + opened[:k]
        return answers, {u for i, u in enumerate(answers) if b >> i & 1}
    elsewhere = sorted(d.used() - set(opened))
    wrong = [opened + ["toolu_stray"]]
    if len(opened) > 1:
        wrong.append(opened[1:])
    if elsewhere:
        wrong.append(opened[:1] + [pick(elsewhere, a)])
    return pick(wrong, b), set()


def outcome(steps: list[str]) -> str:
    if not steps:
        return "not applicable"
    if ": refused, naming " in steps[-1]:
        return "refused"
    return "skipped" if steps[-1].endswith(": skipped") else "done"


async def play(d: AgentDag, kind: str, a: int, b: int) -> None:
    m = d.model
    n = len(d.steps)
    text = f"Message {n}{', lookup ' + str(a) if a % 2 else ''}."
    if kind == "user":
        await d.user(f"Message {n}.")
    elif kind == "assistant":
        await d.assistant(f"Reply {n}.")
    elif kind == "tools":
        if b % 6 == 0 and d.used():
            await d.assistant(uses=[pick(sorted(d.used()), a)])      # taken: refused
        else:
            await d.assistant(f"Calling {TOOL}." if b % 2 else None, uses=1 + a % 3)
    elif kind == "results":
        answers, errors = answer_set(d, a, b)
        await d.results(answers, errors)
    elif kind == "submit":
        answers, errors = answer_set(d, a, b)
        await d.submit(answers, errors)
    elif kind in ("send", "cancel"):
        await d.send(text, cancel=kind == "cancel")
    elif kind == "retry" and d.live("assistant"):
        await d.retry(pick(d.live("assistant"), a))
    elif kind == "edit" and d.live("user"):
        await d.edit(pick(d.live("user"), a), text)
    elif kind == "checkout":
        await d.checkout(pick(d.live(), a))
    elif kind == "rewind" and len(m.chain(d.head)) > 1:
        await d.rewind(pick(m.chain(d.head)[:-1], a))
    elif kind == "delete" and [t for t in m.tips() if t != m.root]:
        await d.delete(pick([t for t in m.tips() if t != m.root], a))
    elif kind == "compact":
        await d.compact(pick(KEEPS, a), head=pick(m.tips(), b))
    elif kind == "uncompact" and d.uncompactable():
        await d.uncompact(pick(d.uncompactable(), a))
    elif kind == "strategy":
        await d.set_strategy("branch" if m.strategy == "rolling" else "rolling")


@settings(max_examples=20, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(moves=MOVES)
async def test_random_agent_conversations_never_split_a_tool_pair(api, moves):
    d = await AgentDag.start(api.client, Ledger.open(api.db, api.tenant, Limits()),
                             "property", "rolling")
    try:
        for move in moves:
            played = len(d.steps)
            await play(d, *move)
            event(f"{move[0]}: {outcome(d.steps[played:])}")
    finally:
        note("steps as played:\n" + "\n".join(d.steps))
