"""Branch names over the GraphQL API (issue 25): a name is data about a branch, held on its
session's NAMES relationship to the branch's tip; it follows the branch as it grows (native
appends and a grown transcript alike), goes with a deleted branch, is announced, carried
by a backup and checked by `ctxdag check`."""
import json

from service.store import Limits
from service.store.backup import VERSION, export_session, import_session
from service.store.invariants import violations
from tests.integration.helpers import DELETE_SESSION, as_version_3, run_cypher

BRANCH = "tip { id } name isHead"
NAME = f"mutation($n: ID!, $x: String!) {{ nameBranch(tipId: $n, name: $x) {{ {BRANCH} }} }}"
UNNAME = f"mutation($n: ID!) {{ unnameBranch(tipId: $n) {{ {BRANCH} }} }}"
STATE = """query($s: ID!) { session(id: $s) { lastEventSeq headId
  branches { tip { id } name } graph { nodes { id branchName } } } }"""
SEND = """mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) {
  userNode { id } reply { id } } }"""
EVENTS = """subscription($s: ID!, $a: Int) { sessionEvents(sessionId: $s, after: $a) {
  seq type ... on BranchNamed { tipId name } ... on BranchUnnamed { tipId } } }"""


async def conversation(client, turns=2):
    sid = (await client("mutation { createSession(title: \"names\") { id } }"
                        ))["createSession"]["id"]
    ids = []
    for i in range(turns):
        turn = (await client(SEND, s=sid, c=f"Question {i}. Tell me."))["sendMessage"]
        ids += [turn["userNode"]["id"], turn["reply"]["id"]]
    return sid, ids


async def names(client, sid):
    """({tip: name} of the branches, {node: branchName} of the graph's named nodes, seq)."""
    session = (await client(STATE, s=sid))["session"]
    graph = {n["id"]: n["branchName"] for n in session["graph"]["nodes"] if n["branchName"]}
    return {b["tip"]["id"]: b["name"] for b in session["branches"]}, graph, \
        session["lastEventSeq"]


async def test_a_name_follows_its_branch_as_it_grows_and_stays_on_the_branch_it_named(api):
    client = api.client
    sid, (q0, a0, q1, a1) = await conversation(client)
    named = (await client(NAME, n=a1, x="main line"))["nameBranch"]
    assert named == {"tip": {"id": a1}, "name": "main line", "isHead": True}
    assert (await names(client, sid))[:2] == ({a1: "main line"}, {a1: "main line"})

    # The branch grows: the name moves to its new tip, through the turn's two appends.
    turn = (await client(SEND, s=sid, c="Question 2. More."))["sendMessage"]
    grown = turn["reply"]["id"]
    assert (await names(client, sid))[:2] == ({grown: "main line"}, {grown: "main line"})

    # A retry of the tip is a new branch beside it: unnamed; the named one keeps its name.
    retried = (await client("mutation($n: ID!) { retry(nodeId: $n) { reply { id } } }",
                            n=grown))["retry"]["reply"]["id"]
    # A fork off an old turn is a new branch too; growing it leaves the name where it is.
    fork = (await client("""mutation($s: ID!, $p: ID!) { appendMessage(sessionId: $s,
        role: USER, content: "Another way.", predecessorId: $p) { id } }""",
                         s=sid, p=a0))["appendMessage"]["id"]
    branches, graph, _ = await names(client, sid)
    assert branches == {grown: "main line", retried: None, fork: None}
    assert graph == {grown: "main line"}

    # Names are unique per session: the fork takes another one.
    await client(NAME, n=fork, x="experiment")
    assert (await names(client, sid))[0] == {grown: "main line", retried: None,
                                             fork: "experiment"}
    # Renaming replaces; unnaming removes, and a second unname writes nothing.
    assert (await client(NAME, n=fork, x="experiment 2"))["nameBranch"]["name"] == \
        "experiment 2"
    _, _, seq = await names(client, sid)
    assert (await client(UNNAME, n=fork))["unnameBranch"]["name"] is None
    assert (await client(UNNAME, n=fork))["unnameBranch"]["name"] is None
    branches, _, after = await names(client, sid)
    assert after == seq + 1 and branches[fork] is None
    assert await violations(api.db, api.tenant, sid, Limits()) == []


async def test_names_are_announced(api):
    client = api.client
    sid, (_, _, _, tip) = await conversation(client)
    _, _, start = await names(client, sid)
    await client(NAME, n=tip, x="announced")
    await client(UNNAME, n=tip)
    events = await client.subscribe(EVENTS, {"s": sid, "a": start}, 2)
    assert [e["data"]["sessionEvents"] for e in events] == [
        {"seq": start + 1, "type": "BRANCH_NAMED", "tipId": tip, "name": "announced"},
        {"seq": start + 2, "type": "BRANCH_UNNAMED", "tipId": tip}]


async def test_what_cannot_be_named_is_refused_and_writes_nothing(api):
    client = api.client
    sid, (q0, a0, q1, a1) = await conversation(client)
    fork = (await client("mutation($n: ID!) { editMessage(nodeId: $n, content: \"Other.\") "
                         "{ reply { id } } }", n=q1))["editMessage"]["reply"]["id"]
    await client(NAME, n=a1, x="taken")
    summary = (await client("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 1)"
                            " { summary { id } } }", s=sid))["compact"]["summary"]["id"]
    _, _, seq = await names(client, sid)
    refused = [
        (q1, "x", "BAD_INPUT", f"node {q1} is not a branch tip: live turns follow it"),
        (summary, "x", "BAD_INPUT", "is a summary or on a spawned side branch"),
        (fork, "taken", "BAD_INPUT", "another branch of the session is already named 'taken'"),
        (fork, "  ", "BAD_INPUT", "branch name must be non-blank text"),
        (fork, "two\nlines", "BAD_INPUT", "branch name must be one line"),
        (fork, " padded", "BAD_INPUT", "must not begin or end with blanks"),
        (fork, "x" * 101, "BAD_INPUT", "101 characters; the limit is 100"),
        ("nod_missing", "x", "NOT_FOUND", "nod_missing"),
    ]
    for node, name, code, message in refused:
        errors = await client.errors(NAME, n=node, x=name)
        assert errors[0]["extensions"]["code"] == code, (node, name, errors)
        assert message in errors[0]["message"], (node, name, errors)
    assert (await names(client, sid))[2] == seq

    # A deleted branch takes its name with it; the name is free for another branch.
    await client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s, tipId: $t) "
                 "{ id } }", s=sid, t=a1)
    errors = await client.errors(NAME, n=a1, x="again")
    assert f"node {a1} was deleted with its branch" in errors[0]["message"]
    assert (await client(NAME, n=fork, x="taken"))["nameBranch"]["name"] == "taken"
    assert (await names(client, sid))[0] == {fork: "taken"}
    assert await violations(api.db, api.tenant, sid, Limits()) == []


async def test_names_travel_through_export_and_import_and_check_names_a_bad_one(api):
    client = api.client
    sid, (q0, a0, q1, a1) = await conversation(client)
    await client(NAME, n=a1, x="kept")
    document = await export_session(api.db, api.tenant, sid, Limits())
    assert document["version"] == VERSION
    assert [(e["node_id"], e["properties"]["name"]) for e in document["branch_names"]] == \
        [(a1, "kept")]
    assert set(document["branch_names"][0]["properties"]) == {"name", "named_at"}

    await run_cypher(api.db, DELETE_SESSION, sid=sid)
    assert await import_session(api.db, api.tenant, document, Limits()) == sid
    assert (await names(client, sid))[0] == {a1: "kept"}
    assert (await export_session(api.db, api.tenant, sid, Limits()))["branch_names"] == \
        document["branch_names"]

    # A document naming an interior turn, or one name twice, is refused whole.
    interior = json.loads(json.dumps(document))
    interior["branch_names"][0]["node_id"] = q1
    await run_cypher(api.db, DELETE_SESSION, sid=sid)
    for bad, message in ((interior, "is not a live branch tip"),):
        try:
            await import_session(api.db, api.tenant, bad, Limits())
        except Exception as e:  # noqa: BLE001 - the message is what is checked
            assert message in str(e)
        else:
            raise AssertionError("a name on an interior turn was imported")
    assert await import_session(api.db, api.tenant, document, Limits()) == sid

    # ctxdag check names a name the API could not have written.
    await run_cypher(api.db, """MATCH (s:Session {id: $sid})-[named:NAMES]->(:Node)
        MATCH (n:Node {id: $q1}) CREATE (s)-[:NAMES {name: 'kept', named_at: named.named_at}]->(n)
        """, sid=sid, q1=q1)
    found = await violations(api.db, api.tenant, sid, Limits())
    assert any(f"branch name: {q1} is named but is not a live branch tip" in v for v in found)
    assert any("branch name 'kept': names 2 branches" in v for v in found)

    # A version 3 document (before branch names) still imports, without any.
    await run_cypher(api.db, DELETE_SESSION, sid=sid)
    version_3 = as_version_3(document)
    assert await import_session(api.db, api.tenant, version_3, Limits()) == sid
    assert (await names(client, sid))[0] == {a1: None}


def _pi(*entries):
    header = {"type": "session", "version": 3, "id": "names-pi", "timestamp":
              "2025-07-01T09:00:00.000Z", "cwd": "/w"}
    return "".join(json.dumps(line) + "\n" for line in (header, *entries))


def _pi_message(entry_id, parent, role, text, second):
    content = text if role == "user" else [{"type": "text", "text": text}]
    message = {"role": role, "content": content, "timestamp": second}
    if role == "assistant":
        message |= {"api": "anthropic-messages", "provider": "anthropic", "model": "m",
                    "stopReason": "stop", "usage": {"input": 1, "output": 1}}
    return {"type": "message", "id": entry_id, "parentId": parent,
            "timestamp": f"2025-07-01T09:00:{second:02d}.000Z", "message": message}


IMPORT = """mutation($c: String!) { importTranscript(content: $c, format: PI) {
  outcome session { id headId } } }"""


async def test_a_named_imported_branch_keeps_its_name_when_its_transcript_grows(api):
    client = api.client
    first = [_pi_message("e1", None, "user", "Q1", 1), _pi_message("e2", "e1", "assistant",
                                                                   "A1", 2)]
    imported = (await client(IMPORT, c=_pi(*first)))["importTranscript"]
    sid, tip = imported["session"]["id"], imported["session"]["headId"]
    await client(NAME, n=tip, x="imported")
    more = [_pi_message("e3", "e2", "user", "Q2", 3),
            _pi_message("e4", "e3", "assistant", "A2", 4),
            _pi_message("e5", "e3", "assistant", "A2, again", 5)]  # a retry beside e4
    grown = (await client(IMPORT, c=_pi(*first, *more)))["importTranscript"]
    assert grown["outcome"] == "EXTENDED"
    branches, graph, _ = await names(client, sid)
    named = [t for t, name in branches.items() if name == "imported"]
    assert len(named) == 1 and len(branches) == 2 and graph == {named[0]: "imported"}
    # The first-born continuation (e4, written before e5) carries the name.
    e4 = (await client("query($n: ID!) { node(id: $n) { ... on Message { metadata } } }",
                       n=named[0]))["node"]["metadata"]
    assert "e4" in json.dumps(e4)
    assert await violations(api.db, api.tenant, sid, Limits()) == []
