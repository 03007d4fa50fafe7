"""Pins over the GraphQL API (issue 25, item 1): data beside a node (the session's PINNED
relationship); a pinned turn inside the covered segment of the summary that applies renders
right after the summary, and the calls that read it name it; compaction keeps room for
pins; a tool pair stays whole; a backup carries pins and `ctxdag check` names a bad one."""
import pytest

from service.config import Settings
from service.store import Limits
from service.store.backup import VERSION, export_session, import_session
from service.store.invariants import violations
from tests.api_client import Client
from tests.app_server import serve
from tests.integration.helpers import DELETE_SESSION, as_version_3, run_cypher
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai

MESSAGE = "id role seq tokens pinned"
PIN = f"mutation($n: ID!) {{ pin(nodeId: $n) {{ {MESSAGE} }} }}"
UNPIN = f"mutation($n: ID!) {{ unpin(nodeId: $n) {{ {MESSAGE} }} }}"
COMPACT = """mutation($s: ID!, $k: Int, $d: Boolean!) {
  compact(sessionId: $s, keepRecentTokens: $k, dryRun: $d) {
    status coveredIds retainedIds summaryText tokensBefore tokensAfter summary { id content }
  } }"""
STATE = """query($s: ID!) { session(id: $s) { lastEventSeq nodeCount
  render { nodeIds summaryId tokens nodes { id pinned } }
  graph { nodes { id pinned coversIds } } } }"""
EVENTS = """subscription($s: ID!, $a: Int) { sessionEvents(sessionId: $s, after: $a) {
  seq type ... on NodePinned { nodeId } ... on NodeUnpinned { nodeId } } }"""
SEND = """mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) {
  userNode { id } reply { id } call { readIds } } }"""


def question(i: int) -> str:
    return f"Question {i:03d}. ".ljust(100, "x")


async def conversation(client, exchanges: int, title: str = "pins"):
    sid = (await client("mutation($t: String) { createSession(title: $t, systemPrompt:"
                        " \"Terse.\") { id root { id } } }", t=title))["createSession"]
    ids = [sid["root"]["id"]]
    for i in range(exchanges):
        turn = (await client(SEND, s=sid["id"], c=question(i)))["sendMessage"]
        ids += [turn["userNode"]["id"], turn["reply"]["id"]]
    return sid["id"], ids


async def session_state(client, sid):
    return (await client(STATE, s=sid))["session"]


async def test_a_pinned_turn_renders_after_the_summary_and_calls_read_it(api):
    client = api.client
    sid, ids = await conversation(client, 6)
    root, rule = ids[0], ids[1]  # the first question: "a rule stated early"
    before = await session_state(client, sid)
    pinned = (await client(PIN, n=rule))["pin"]
    assert pinned["pinned"] is True
    after = await session_state(client, sid)
    # Nothing is covered yet: the render is the same chain; one event, one relationship.
    assert after["render"]["nodeIds"] == before["render"]["nodeIds"]
    assert after["lastEventSeq"] == before["lastEventSeq"] + 1
    assert after["nodeCount"] == before["nodeCount"]
    # Pinning a pinned node again writes nothing.
    assert (await client(PIN, n=rule))["pin"] == pinned
    assert (await session_state(client, sid))["lastEventSeq"] == after["lastEventSeq"]

    result = (await client(COMPACT, s=sid, k=130, d=False))["compact"]
    assert result["status"] == "COMPACTED"
    summary = result["summary"]["id"]
    assert rule in result["coveredIds"]
    assert "(1 pinned turn stays verbatim after this summary.)" in result["summary"]["content"]
    state = await session_state(client, sid)
    retained = result["retainedIds"]
    assert state["render"]["nodeIds"] == [root, summary, rule, *retained]
    assert [n["pinned"] for n in state["render"]["nodes"]] == \
        [False, False, True] + [False] * len(retained)
    # The capsule still folds the pinned row, which is marked as rendered (pinned).
    rows = {r["id"]: r for r in state["graph"]["nodes"]}
    assert rule in rows[summary]["coversIds"] and rows[rule]["pinned"] is True

    # The next call reads the pinned node itself.
    turn = (await client(SEND, s=sid, c=question(50)))["sendMessage"]
    assert turn["call"]["readIds"][:3] == [root, summary, rule]
    # A pinned turn rendered after the summary is still inside its segment: no upTo there.
    errors = await client.errors("mutation($s: ID!, $u: ID) { compact(sessionId: $s, upTo: $u)"
                                 " { status } }", s=sid, u=rule)
    assert errors[0]["extensions"]["code"] == "BAD_INPUT"
    assert "lies inside the current summary's segment" in errors[0]["message"]
    # Unpinning takes it out of the render; a second unpin writes nothing.
    assert (await client(UNPIN, n=rule))["unpin"]["pinned"] is False
    state = await session_state(client, sid)
    assert rule not in state["render"]["nodeIds"]
    assert (await client(UNPIN, n=rule))["unpin"]["pinned"] is False
    assert (await session_state(client, sid))["lastEventSeq"] == state["lastEventSeq"]

    events = await client.subscribe(EVENTS, {"s": sid, "a": before["lastEventSeq"]}, 1)
    assert events[0]["data"]["sessionEvents"] == {
        "seq": before["lastEventSeq"] + 1, "type": "NODE_PINNED", "nodeId": rule}
    assert await violations(api.db, api.tenant, sid, Limits()) == []


async def test_pins_count_toward_the_cut_and_a_preview_equals_the_run(api):
    client = api.client
    sid, ids = await conversation(client, 8)
    plain = (await client(COMPACT, s=sid, k=200, d=True))["compact"]
    tokens = {n["id"]: n["tokens"] for n in (await client(
        "query($s: ID!) { session(id: $s) { render { nodes { id tokens } } } }",
        s=sid))["session"]["render"]["nodes"]}
    await client(PIN, n=ids[3])
    await client(PIN, n=ids[4])
    preview = (await client(COMPACT, s=sid, k=200, d=True))["compact"]
    # The pinned turns' tokens are charged first: the retained tail is shorter.
    pinned_tokens = tokens[ids[3]] + tokens[ids[4]]
    assert len(preview["retainedIds"]) < len(plain["retainedIds"])
    assert sum(tokens[i] for i in preview["retainedIds"]) + pinned_tokens <= 200
    real = (await client(COMPACT, s=sid, k=200, d=False))["compact"]
    assert {k: real[k] for k in ("coveredIds", "retainedIds", "summaryText", "tokensAfter")} \
        == {k: preview[k] for k in ("coveredIds", "retainedIds", "summaryText", "tokensAfter")}
    state = await session_state(client, sid)
    assert state["render"]["nodeIds"] == [ids[0], real["summary"]["id"], ids[3], ids[4],
                                          *real["retainedIds"]]
    assert state["render"]["tokens"] == real["tokensAfter"]


async def test_a_remembered_render_is_not_extended_across_a_pin(ledger):
    from service.turns.providers import OfflineProvider
    from service.turns.service import Turns
    from tests.integration.helpers import make_compactor

    turns = Turns(ledger, make_compactor(ledger), OfflineProvider())
    session = await ledger.sessions.create("memory", "sys")
    first = await turns.send_message(session.id, question(0))
    for i in range(1, 5):
        await turns.send_message(session.id, question(i))
    await make_compactor(ledger).compact(session.id, keep_recent_tokens=130)
    await turns.send_message(session.id, question(5))
    extended = turns.renders.extended
    await ledger.pins.set(first.user_node.id, 10_000)
    result = await turns.send_message(session.id, question(6))
    # The prompt was rendered in full (only the reply extended it), and holds the pin.
    assert turns.renders.extended - extended == 1
    call = await ledger.calls.get(result.call_id)
    full = await ledger.views.render(session.id, result.user_node.id)
    assert call.read_ids == full.node_ids and first.user_node.id in call.read_ids


async def test_a_pinned_tool_message_keeps_its_pair_whole(api):
    client = api.client
    sid, ids = await conversation(client, 1, "agent")
    append = """mutation($s: ID!, $r: Role!, $c: String, $b: [ContentBlockInput!]) {
      appendMessage(sessionId: $s, role: $r, content: $c, blocks: $b) { id } }"""

    async def add(role, content=None, blocks=None):
        return (await client(append, s=sid, r=role, c=content, b=blocks))["appendMessage"]["id"]

    asked = await add("USER", "Read the notes.")
    use = await add("ASSISTANT", blocks=[{"toolUse": {"id": "toolu_pin", "name": "read_file",
                                                      "input": {"path": "notes.txt"}}}])
    result = await add("TOOL", blocks=[{"toolResult": {"toolUseId": "toolu_pin",
                                                       "content": "The notes say: keep it."}}])
    done = await add("ASSISTANT", "Read them.")
    for i in range(4):
        await client(SEND, s=sid, c=question(i))
    await client(PIN, n=result)  # the tool result alone: its tool use comes along
    compacted = (await client(COMPACT, s=sid, k=130, d=False))["compact"]
    assert {asked, use, result, done} <= set(compacted["coveredIds"])
    state = await session_state(client, sid)
    summary = compacted["summary"]["id"]
    assert state["render"]["nodeIds"][:4] == [ids[0], summary, use, result]
    body = (await client("query($s: ID!) { session(id: $s) { render {"
                         " a: request(format: ANTHROPIC_MESSAGES)"
                         " o: request(format: OPENAI_CHAT) } } }", s=sid))["session"]["render"]
    assert_valid_anthropic(body["a"])
    assert_valid_openai(body["o"])
    # Pinning the tool use instead renders the same pair.
    await client(UNPIN, n=result)
    await client(PIN, n=use)
    assert (await session_state(client, sid))["render"]["nodeIds"][:4] == \
        [ids[0], summary, use, result]


async def test_bad_pins_are_refused_and_write_nothing(api):
    client = api.client
    sid, ids = await conversation(client, 5)
    others_sid, others = await conversation(api.other, 1)
    compacted = (await client(COMPACT, s=sid, k=130, d=False))["compact"]
    summary = compacted["summary"]["id"]
    await client("mutation($n: ID!) { retry(nodeId: $n) { reply { id } } }", n=ids[-1])
    await client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s, tipId: $t)"
                 " { headId } }", s=sid, t=ids[-1])
    before = await session_state(client, sid)
    cases = {
        "ROOT": (ids[0], "BAD_INPUT", f"node {ids[0]} is the session's ROOT"),
        "a summary": (summary, "BAD_INPUT", f"node {summary} is a summary"),
        "deleted": (ids[-1], "BAD_INPUT", f"node {ids[-1]} was deleted with its branch"),
        "unknown": ("nod_missing", "NOT_FOUND", "nod_missing"),
        "another tenant's": (others[1], "NOT_FOUND", others[1]),
        "not an id": ("", "BAD_INPUT", "node id"),
    }
    for case, (node_id, code, message) in cases.items():
        for query in (PIN, UNPIN) if case in ("deleted", "unknown", "another tenant's") \
                else (PIN,):
            errors = await client.errors(query, n=node_id)
            assert errors[0]["extensions"]["code"] == code, case
            assert message in errors[0]["message"], (case, errors[0]["message"])
            assert await session_state(client, sid) == before, case
    assert (await api.other(f"query($n: ID!) {{ node(id: $n) {{ ... on Message {{ pinned }}"
                            " } }", n=others[1]))["node"]["pinned"] is False


@pytest.fixture
async def small_window(api):
    """A server whose context window is 200 tokens: pins may hold 50 with ROOT."""
    settings = Settings.from_env({"CTXDAG_API_TOKENS": "tok-small=" + api.tenant,
                                  "CTXDAG_CONTEXT_WINDOW": "200",
                                  "CTXDAG_KEEP_RECENT_TOKENS": "20"})
    async with serve(settings, api.db) as url:
        yield Client(url, "tok-small")


async def test_pins_that_would_exceed_their_share_of_the_window_are_refused(small_window):
    client = small_window
    sid, ids = await conversation(client, 2)  # questions of 25 tokens each
    await client(PIN, n=ids[1])
    before = await session_state(client, sid)
    errors = await client.errors(PIN, n=ids[3])
    assert errors[0]["extensions"]["code"] == "BAD_INPUT"
    assert "over the 50 pins may hold" in errors[0]["message"], errors[0]["message"]
    assert await session_state(client, sid) == before
    # Unpinning one makes room again.
    await client(UNPIN, n=ids[1])
    assert (await client(PIN, n=ids[3]))["pin"]["pinned"] is True


async def test_pins_travel_through_export_and_import_and_check_names_a_bad_one(api):
    client = api.client
    sid, ids = await conversation(client, 5)
    await client(PIN, n=ids[3])
    await client(COMPACT, s=sid, k=130, d=False)
    rendered = (await session_state(client, sid))["render"]["nodeIds"]
    document = await export_session(api.db, api.tenant, sid, Limits())
    assert document["version"] == VERSION
    assert [entry["node_id"] for entry in document["pins"]] == [ids[3]]
    assert set(document["pins"][0]["properties"]) == {"pinned_at"}

    await run_cypher(api.db, DELETE_SESSION, sid=sid)
    assert await import_session(api.db, api.tenant, document, Limits()) == sid
    assert (await session_state(client, sid))["render"]["nodeIds"] == rendered
    assert (await export_session(api.db, api.tenant, sid, Limits()))["pins"] == document["pins"]

    # A version 3 document (no pins) still imports; one pinning ROOT is refused.
    await run_cypher(api.db, DELETE_SESSION, sid=sid)
    root_pin = {"node_id": ids[0], "properties": document["pins"][0]["properties"]}
    bad = {**document, "pins": [*document["pins"], root_pin]}
    with pytest.raises(Exception, match="pin of node .*: the node is ROOT"):
        await import_session(api.db, api.tenant, bad, Limits())
    old = as_version_3(document)
    assert await import_session(api.db, api.tenant, old, Limits()) == sid
    assert ids[3] not in (await session_state(client, sid))["render"]["nodeIds"]

    # `ctxdag check` names a pin the API could not have written.
    await run_cypher(api.db, "MATCH (s:Session {id: $sid})-[:ROOT]->(r) "
                     "CREATE (s)-[:PINNED {pinned_at: datetime()}]->(r)", sid=sid)
    found = await violations(api.db, api.tenant, sid, Limits())
    assert any("pin of node" in v and "ROOT" in v for v in found), found
