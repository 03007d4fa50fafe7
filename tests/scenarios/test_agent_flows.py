"""Agent conversations end to end over the public GraphQL API, on the real store.

Each scenario drives an `AgentDag` (tests/scenarios/agent_dag.py), which checks after every
step, for every live branch tip and HEAD: the render against an independent model, the tool
uses it leaves open, its provider requests (refused while tool uses are open, otherwise
valid Anthropic and OpenAI bodies by tests/provider_requests.py), and the ledger's own
invariants. Writes the tool-pair rule forbids are predicted by the scenario and must be
refused, changing nothing.
"""
from __future__ import annotations

import pytest

from service.store import Database, Ledger, Limits
from tests.scenarios.agent_dag import TOOLS, AgentDag


@pytest.fixture
def app_ledger(api):
    return Ledger.open(api.db, api.tenant, Limits())


async def start(api, ledger: Ledger, title: str, strategy: str = "rolling") -> AgentDag:
    return await AgentDag.start(api.client, ledger, title, strategy)


async def request(d: AgentDag, head: str, fmt: str) -> dict:
    data = await d.client(f"query($s: ID!, $h: ID!, $t: [ToolInput!]) {{ session(id: $s) {{"
                          f" render(headId: $h) {{ request(format: {fmt}, tools: $t) }} }} }}",
                          s=d.id, h=head, t=TOOLS)
    return data["session"]["render"]["request"]


async def tool_run(d: AgentDag, rounds: int, errors_every: int = 0) -> list[str]:
    """`rounds` tool round trips at HEAD, appended: an assistant message calling 1–3 tools
    (in turn), then the tool message answering them (every `errors_every`-th with an error
    result). Returns the nodes in order."""
    nodes = []
    for k in range(rounds):
        call = await d.assistant(f"Step {k}." if k % 2 else None, uses=1 + k % 3)
        failed = {d.uses[call][0]} if errors_every and k % errors_every == 0 else set()
        nodes += [call, await d.results(errors=failed)]
    return nodes


async def test_parallel_tool_calls_and_error_results(api, app_ledger):
    d = await start(api, app_ledger, "parallel")
    await d.user("Read three files, please.")
    call = await d.assistant("Reading them.", uses=3)
    x, y, z = d.uses[call]
    # Wrong sets of results, and anything else after open tool uses: refused, nothing written.
    assert await d.results([x, y]) is None                      # z unanswered
    assert await d.results([x, y, z, "toolu_stray"]) is None    # answers nothing open
    assert await d.results([x, y, "toolu_other"]) is None
    assert await d.user("hello?") is None
    assert await d.assistant("Never mind.") is None
    assert await d.assistant(uses=1) is None
    answered = await d.results([z, x, y], errors={y})           # any order, one failed
    assert await d.results([x]) is None                         # answered already
    await d.assistant("Two read, one failed.")
    anthropic = await request(d, d.head, "ANTHROPIC_MESSAGES")
    results = anthropic["messages"][-2]["content"]
    assert [(r["tool_use_id"], r.get("is_error", False)) for r in results] == [
        (z, False), (x, False), (y, True)]
    openai = await request(d, answered, "OPENAI_CHAT")
    assert [m["tool_call_id"] for m in openai["messages"] if m["role"] == "tool"] == [z, x, y]
    assert openai["messages"][-1]["content"].startswith("[error] ")

    # The offline model's tool loop: a parallel set is answered in one submit.
    await d.send("Please lookup the word ledger.")
    (offline,) = d.open_at(d.head)
    assert await d.send("hello?") is None
    assert await d.submit(["toolu_stray"]) is None
    assert await d.submit([offline, x]) is None
    await d.submit(errors={offline})
    assert await d.assistant(uses=[x]) is None                  # a used id names one tool use
    await d.assistant("And again, in parallel.", uses=2)
    assert await d.submit(d.open_at(d.head)[:1]) is None
    await d.submit()


async def test_cancelling_open_tool_uses(api, app_ledger):
    d = await start(api, app_ledger, "cancel")
    await d.send("Please lookup zebra.")
    assert await d.send("Never mind.") is None
    await d.send("Never mind.", cancel=True)
    await d.assistant("Let me check three things.", uses=3)
    await d.send("Stop, please lookup nothing.", cancel=True)   # cancels three, calls again
    await d.send("Stop again.", cancel=True)
    await d.send("Nothing is open now.", cancel=True)


async def test_retry_of_a_tool_using_reply_and_an_edit_before_it(api, app_ledger):
    d = await start(api, app_ledger, "retry and edit")
    first = await d.send("Hello.")
    hello = d.model.turns[first].predecessor
    ask = await d.send("Please lookup alpha.")
    prompt = d.model.turns[ask].predecessor
    again = await d.retry(ask)                                  # a second open tip
    assert d.open_at(again) and d.open_at(ask)
    reply = await d.submit()
    after_results = await d.retry(reply)                        # retried after the results
    assert not d.open_at(after_results)
    await d.checkout(ask)                                       # HEAD on the first open tip
    assert await d.user("skip it") is None
    await d.submit(errors=set(d.open_at(ask)))
    await d.edit(prompt, "Please lookup beta instead.")         # an edit before the tool use
    await d.edit(prompt, "No tools this time.")
    await d.retry(first)
    await d.edit(hello, "Hello again, lookup gamma.")
    await d.retry(d.head)                                       # a tool use retried at once


async def test_a_fork_inside_a_tool_run(api, app_ledger):
    d = await start(api, app_ledger, "fork in a run")
    await d.send("Hello.")
    await d.user("Run the tools.")
    run = await tool_run(d, 4, errors_every=3)
    await d.assistant("Done.")
    a1, t1, a2, t2 = run[2:6]
    await d.checkout(a2)                                        # HEAD inside, tool uses open
    assert await d.send("What now?") is None
    assert await d.user("What now?") is None
    assert await d.results(d.open_at(a2)[:1]) is None
    other = await d.results(errors=set(d.uses[a2]))             # a second answer: a new branch
    assert d.model.turns[other].predecessor == a2 and d.head == other
    await d.assistant("That failed; another way.", uses=1)
    await d.submit()
    await d.checkout(t1)                                        # fork after a result
    fork = await d.assistant(uses=2)
    await d.results(at=a2)                                      # off HEAD: a third answer
    assert d.head == fork and d.open_at(d.head)
    await d.results()
    await d.user("And now?")
    await d.assistant("Now this.", uses=1, at=t2)               # off HEAD, leaves uses open
    await d.rewind(run[1])
    await d.send("Please lookup from here.")


async def test_deleting_branches_that_end_in_open_tool_uses_or_in_results(api, app_ledger):
    d = await start(api, app_ledger, "delete")
    await d.send("Hello.")
    await d.user("Work.")
    call, answered = await tool_run(d, 1)
    main = await d.assistant("Done.")
    await d.checkout(answered)
    opened = await d.assistant(uses=2)                          # a branch ending in tool uses
    await d.checkout(answered)
    await d.assistant(uses=1)
    results = await d.results()                                 # one ending in results
    await d.checkout(call)
    cancelled = await d.send("Forget it.", cancel=True)         # one through a cancel
    await d.checkout(main)
    await d.delete(opened)
    assert d.head == main
    await d.checkout(results)
    await d.delete(results)                                     # HEAD goes to the fork point
    assert d.head == answered
    await d.delete(cancelled)
    assert set(d.model.tips()) == {main}
    await d.checkout(main)
    asked = await d.send("Please lookup once more.")
    await d.checkout(main)
    await d.send("Or without tools.")
    await d.checkout(asked)
    await d.delete(asked)                                       # the open tip holding HEAD
    assert d.head == main
    await d.delete(d.model.tips()[0])                           # the last branch: all of it
    assert d.head == d.model.root


@pytest.mark.parametrize("strategy", ["rolling", "branch"])
async def test_tool_runs_under_both_summary_strategies(api, app_ledger, strategy):
    d = await start(api, app_ledger, f"strategy {strategy}", strategy)
    for i in range(3):
        await d.send(f"Question {i}. ".ljust(100, "x"))
    await d.user("Run the tools.")
    run = await tool_run(d, 3, errors_every=2)
    await d.assistant("Done.")
    await d.send("Thanks. ".ljust(100, "x"))
    tip = d.head
    s1 = await d.compact(keep=80)                               # the run and what came before
    assert s1 is not None and run[-1] in d.model.summaries[s1].covers
    await d.checkout(run[3])                                    # a fork inside the coverage
    await d.assistant("Another way.", uses=1)
    await d.results()
    await d.send("Please lookup on the fork.")
    await d.submit()
    await d.send("And so? ".ljust(100, "x"))
    fork = d.head
    s2 = await d.compact(keep=80, head=fork)
    await d.compact(keep=80, head=tip)
    await d.set_strategy("branch" if strategy == "rolling" else "rolling")
    await d.uncompact(s2)
    await d.set_strategy(strategy)
    await d.checkout(tip)
    await d.send("Please lookup at the tip.")                   # open tip on a compacted branch
    for candidate in d.uncompactable():
        await d.uncompact(candidate)
    assert d.model.applicable(fork) is None


async def test_compacting_a_head_whose_tool_uses_are_open_leaves_them_open(api, app_ledger):
    """The shortest cut inside a tool pair: no user turn can open a tail after the tool
    use, and the summary must not swallow it, leaving its result to follow the summary."""
    d = await start(api, app_ledger, "open at the cut")
    await d.send("Hello.")
    call = await d.send("Please lookup ledger.")
    await d.compact(keep=0, head=call)
    await d.submit()


@pytest.mark.parametrize("keep", [0, 150])
async def test_compaction_at_every_position_of_a_long_tool_run(api, app_ledger, keep):
    """One user prompt, then 22 tool round trips and a final answer, after two exchanges:
    compacted with headId at every node of the run in turn (each summary undone before the
    next), every tip and HEAD checked after each compaction and each uncompact. The
    positions where it breaks are listed together."""
    d = await start(api, app_ledger, f"long run keep={keep}")
    for i in range(2):
        await d.send(f"Question {i}. ".ljust(100, "x"))
    prompt = await d.user("Work through the whole list with the tools.")
    run = await tool_run(d, 22, errors_every=5)
    final = await d.assistant("All done.")
    broken: list[str] = []
    for position in [prompt, *run, final]:
        try:
            await d.compact(keep, head=position)
        except AssertionError as e:
            broken.append(f"{d.show(position)}: {str(e).splitlines()[0][:400]}")
        for summary in d.uncompactable():
            await d.uncompact(summary)
    assert not broken, f"{len(broken)} of {len(run) + 2} positions break:\n" + "\n".join(broken)


async def test_a_restart_of_the_service_changes_no_render_and_no_request(
        client, service, neo4j_driver, checked):
    d = await AgentDag.start(client, Ledger.open(Database(neo4j_driver), service.tenant,
                                                 Limits()), "restart", "branch")
    checked.append(d.id)
    await d.send("Hello. ".ljust(100, "x"))
    await d.user("Run the tools.")
    run = await tool_run(d, 2, errors_every=2)
    await d.assistant("Done.")
    await d.send("Thanks. ".ljust(100, "x"))
    await d.compact(keep=80)
    await d.checkout(run[1])
    await d.assistant(uses=2)                                   # an open tip
    await d.checkout(run[-1])
    await d.send("Please lookup after the run.")
    await d.submit()                                            # a tip after results
    heads = d.heads()
    before = (await d.renders(heads), await d.requests([h for h in heads if not d.open_at(h)]))
    service.restart()
    await d.check()
    after = (await d.renders(heads), await d.requests([h for h in heads if not d.open_at(h)]))
    assert after == before
    await d.checkout(heads[0])
    await d.submit() if d.open_at(d.head) else await d.send("Still here.")
