"""Concurrency over the API, loopback only, bounded in count. After each: the checker passes,
no node is lost, and every session has exactly one HEAD."""
import asyncio

from tests.scenarios.conversation import Conversation

COUNT = "query($s: ID!) { session(id: $s) { nodeCount calls { id } headId } }"


async def test_twenty_concurrent_messages_on_one_session(client, checked):
    c = await Conversation.start(client, "twenty at once")
    checked.append(c.id)
    send = ("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) {"
            " userNode { id } reply { id } error } }")
    turns = await asyncio.gather(*(client(send, s=c.id, c=f"Message {i}.") for i in range(20)))
    assert all(t["sendMessage"]["error"] is None for t in turns)
    state = (await client(COUNT, s=c.id))["session"]
    assert state["nodeCount"] == 1 + 2 * 20
    assert len(state["calls"]) == 20
    replies = {t["sendMessage"]["reply"]["id"] for t in turns}
    assert state["headId"] in replies


async def test_two_concurrent_compactions_leave_one_active_summary(client, checked):
    c = await Conversation.start(client, "two compactions")
    checked.append(c.id)
    await c.chat(8)
    compact = "mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 130) { status } }"
    results = await asyncio.gather(client(compact, s=c.id), client(compact, s=c.id))
    statuses = sorted(r["compact"]["status"] for r in results)
    assert statuses in (["COMPACTED", "FAILED"], ["COMPACTED", "COMPACTED"],
                        ["COMPACTED", "SKIPPED"])
    graph = (await client("query($s: ID!) { session(id: $s) { activeSummary { id } graph {"
                          " nodes { id role supersededSummary coversIds } } } }",
                          s=c.id))["session"]
    current = [n for n in graph["graph"]["nodes"]
               if n["role"] == "SUMMARY" and not n["supersededSummary"]]
    assert [n["id"] for n in current] == [graph["activeSummary"]["id"]]
    assert [n["id"] for n in graph["graph"]["nodes"] if n["coversIds"]] == [current[0]["id"]]


async def test_concurrent_turns_on_twenty_sessions(client, checked):
    sessions = [await Conversation.start(client, f"parallel {i}") for i in range(20)]
    checked.extend(c.id for c in sessions)

    async def converse(c):
        await c.chat(3)

    await asyncio.gather(*(converse(c) for c in sessions))
    for c in sessions:
        state = (await client(COUNT, s=c.id))["session"]
        assert state["nodeCount"] == 7 and len(state["calls"]) == 3
        await c.expect()
