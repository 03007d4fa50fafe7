"""Spec §8 over the public API: the flows where cross-module side effects would show.

After every step: HEAD, the branch list and every branch's rendered ids (Conversation.expect).
"""
import asyncio

from tests.scenarios.conversation import Conversation

KEEP = 130  # keepRecentTokens that retains about two exchanges (question + offline reply)


async def test_section_8_chat_fork_checkout_compact_chat_compact_chat_restart(
        client, service, checked):
    c = await Conversation.start(client, "§8")
    checked.append(c.id)
    main = await c.chat(6)                                    # chat
    await c.expect(head=main[-1])
    fork = await c.edit(main[2], "Question 001, asked differently.")   # fork
    await c.expect(head=fork[1])
    await c.checkout(main[-1])                                # checkout back
    await c.expect(head=main[-1])
    s1 = await c.compact(KEEP)                                # compact
    state = await c.expect(head=main[-1])
    assert state["render"]["nodeIds"][:2] == [c.model.root, s1]
    assert await c.rendered(fork[1]) == c.model.chain(fork[1])  # the fork stays verbatim
    main += await c.chat(2, start=6)                          # chat
    await c.expect(head=main[-1])
    s2 = await c.compact(KEEP)                                # compact again
    state = await c.expect(head=main[-1])
    assert s1 not in state["render"]["nodeIds"] and state["render"]["nodeIds"][1] == s2
    main += await c.chat(1, start=8)                          # chat
    before = await c.expect(head=main[-1])
    service.restart()                                         # restart the service, load
    after = await c.expect(head=main[-1])
    assert after == before


async def test_compaction_while_head_sits_on_a_fork(client, checked):
    c = await Conversation.start(client, "compact on a fork")
    checked.append(c.id)
    main = await c.chat(3)
    fork = list(await c.edit(main[0], "Question 000, edited. ".ljust(100, "x")))
    fork += await c.chat(4, start=10)
    await c.expect(head=fork[-1])
    summary = await c.compact(KEEP)
    state = await c.expect(head=fork[-1])                     # HEAD stays on the fork
    assert state["render"]["nodeIds"][1] == summary
    assert set(c.model.covers) <= set(fork)                   # the fork's turns, not main's


async def test_a_fork_retried_from_inside_the_covered_segment_renders_verbatim(client, checked):
    c = await Conversation.start(client, "retry inside the segment")
    checked.append(c.id)
    main = await c.chat(6)
    await c.compact(KEEP)
    covered_reply = next(n for n in c.model.covers[1:] if n in main[1::2])
    retried = await c.retry(covered_reply)
    state = await c.expect(head=retried)
    assert c.model.summary not in state["render"]["nodeIds"]


async def test_a_fork_whose_chain_holds_the_whole_segment_renders_with_the_summary(
        client, checked):
    c = await Conversation.start(client, "fork after the segment")
    checked.append(c.id)
    main = await c.chat(6)
    summary = await c.compact(KEEP)
    retried = await c.retry(main[-1])
    state = await c.expect(head=retried)
    assert state["render"]["nodeIds"][:2] == [c.model.root, summary]


async def test_a_spawned_task_runs_while_the_user_keeps_chatting(client, checked):
    c = await Conversation.start(client, "spawn while chatting")
    checked.append(c.id)
    first = await c.chat(1)
    spawn = asyncio.create_task(c.spawn(first[1], "Work on this in the background."))
    more = await c.chat(2, start=1)
    task_root, task_reply = await spawn
    await c.expect(head=more[-1])                             # the task never took HEAD
    data = await client("query($n: ID!) { node(id: $n) { ... on Message { callerId sideBranch } } }", n=task_reply)
    assert data["node"] == {"callerId": first[1], "sideBranch": True}


async def test_deleting_the_compacted_branch(client, checked):
    c = await Conversation.start(client, "delete the compacted branch")
    checked.append(c.id)
    main = await c.chat(5)
    fork = list(await c.edit(main[0], "Question 000, another way."))
    await c.checkout(main[-1])
    await c.compact(KEEP)
    await c.expect(head=main[-1])
    await c.delete(main[-1])                                  # HEAD was on it: to the fork point
    state = await c.expect(head=c.model.root)
    assert state["render"]["nodeIds"] == [c.model.root]
    await c.checkout(fork[1])
    await c.expect(head=fork[1])
    fork += await c.chat(1, start=20)                         # the session stays usable
    await c.expect(head=fork[-1])


async def test_compaction_after_a_rewind(client, checked):
    c = await Conversation.start(client, "compact after rewind")
    checked.append(c.id)
    main = await c.chat(6)
    await c.rewind(main[7])
    await c.expect(head=main[7])
    summary = await c.compact(KEEP)
    state = await c.expect(head=main[7])
    assert set(c.model.covers) <= set(c.model.chain(main[7]))
    assert state["render"]["nodeIds"][1] == summary
    # The longer branch past HEAD also holds the whole segment: it renders with the summary.
    assert (await c.rendered(main[-1]))[1] == summary
    main_tail = await c.chat(1, start=30)
    await c.expect(head=main_tail[-1])


async def test_a_deleted_active_summary_is_no_longer_named_by_the_session(client, checked):
    c = await Conversation.start(client, "summary deleted with its branch")
    checked.append(c.id)
    main = await c.chat(5)
    fork = list(await c.edit(main[0], "Question 000, once more."))
    await c.checkout(main[-1])
    await c.compact(KEEP)
    await c.delete(main[-1])
    data = await client("query($s: ID!) { session(id: $s) { activeSummary { id } extraMeta"
                        " graph { nodes { id coversIds } } } }", s=c.id)
    assert data["session"]["activeSummary"] is None
    assert "_last_summary_id" not in data["session"]["extraMeta"]
    assert all(n["coversIds"] is None for n in data["session"]["graph"]["nodes"])
    await c.checkout(fork[1])
    fork += await c.chat(3, start=40)
    summary = await c.compact(KEEP)                           # a new rolling summary
    await c.expect(head=fork[-1])
    assert set(c.model.covers) <= set(fork)
    assert (await client("query($s: ID!) { session(id: $s) { activeSummary { id } } }",
                         s=c.id))["session"]["activeSummary"]["id"] == summary
