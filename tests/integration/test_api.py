"""The GraphQL API over HTTP, end to end, against real Neo4j."""
import httpx

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


async def test_sessions_are_paged_newest_first(api):
    client = api.other  # tenant B: its own sessions only
    created = [(await new_session(client, f"page {i}"))["id"] for i in range(5)]
    seen, after = [], None
    while True:
        page = (await client("query($a: String) { sessions(first: 2, after: $a) { nodes { id }"
                             " pageInfo { endCursor hasNextPage } } }", a=after))["sessions"]
        seen += [s["id"] for s in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen[:5] == created[::-1]


async def test_moves_through_the_api(api):
    client = api.client
    session = await new_session(client)
    sid = session["id"]
    t1 = await send(client, sid, "First question.")
    t2 = await send(client, sid, "Second question.")
    # retry: a sibling reply, HEAD on it
    retry = (await client("mutation($n: ID!) { retry(nodeId: $n) { reply { id predecessorId }"
                          " userNode { id } call { readIds } } }", n=t2["reply"]["id"]))["retry"]
    assert retry["reply"]["predecessorId"] == t2["userNode"]["id"] and retry["userNode"] is None
    # edit: a sibling user message, answered, HEAD on the answer
    edit = (await client("mutation($n: ID!, $c: String!) { editMessage(nodeId: $n, content: $c)"
                         " { userNode { id predecessorId } reply { id } } }",
                         n=t1["userNode"]["id"], c="First question, edited."))["editMessage"]
    assert edit["userNode"]["predecessorId"] == session["rootId"]
    # checkout / rewind
    moved = (await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) {"
                          " headId } }", s=sid, n=t2["reply"]["id"]))["checkout"]
    assert moved["headId"] == t2["reply"]["id"]
    rewound = (await client("mutation($s: ID!, $n: ID!) { rewind(sessionId: $s, nodeId: $n) {"
                            " headId branches { tip { id } isHead holdsHead } } }",
                            s=sid, n=t1["reply"]["id"]))["rewind"]
    assert rewound["headId"] == t1["reply"]["id"]
    assert {b["tip"]["id"] for b in rewound["branches"] if b["holdsHead"]} == {
        t2["reply"]["id"], retry["reply"]["id"]}
    # appendMessage with an explicit predecessor forks without moving HEAD
    node = (await client("mutation($s: ID!, $p: ID) { appendMessage(sessionId: $s, role: TOOL,"
                         " content: \"tool output\", predecessorId: $p, callerId: $p) {"
                         " id role predecessorId callerId } }",
                         s=sid, p=t2["userNode"]["id"]))["appendMessage"]
    assert node["role"] == "TOOL" and node["callerId"] == t2["userNode"]["id"]
    # deleteBranch: HEAD was not on it
    deleted = (await client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s, tipId: $t)"
                            " { headId branches { tip { id } } } }",
                            s=sid, t=edit["reply"]["id"]))["deleteBranch"]
    assert deleted["headId"] == t1["reply"]["id"]
    assert edit["reply"]["id"] not in {b["tip"]["id"] for b in deleted["branches"]}
    # node and children
    data = await client("query($n: ID!) { node(id: $n) { id ... on Message { children { id role } } } }",
                        n=t2["userNode"]["id"])
    assert {c["id"] for c in data["node"]["children"]} == {
        t2["reply"]["id"], retry["reply"]["id"], node["id"]}


async def test_update_session_merges_meta_and_sets_title(api):
    client = api.client
    session = await new_session(client)
    data = await client("mutation($s: ID!, $m: JSON) { updateSession(sessionId: $s, title: "
                        "\"renamed\", extraMeta: $m) { title extraMeta headId } }",
                        s=session["id"], m={"color": "blue"})
    assert data["updateSession"] == {"title": "renamed", "extraMeta": {"color": "blue"},
                                     "headId": session["headId"]}


async def test_spawn_task_and_record_call_and_provenance_queries(api):
    client = api.client
    session = await new_session(client)
    sid = session["id"]
    turn = await send(client, sid, "Delegate something.")
    task = (await client("mutation($s: ID!, $f: ID!) { spawnTask(sessionId: $s, fromNodeId: $f,"
                         " prompt: \"Sub task.\") { userNode { id callerId } reply { id callerId }"
                         " call { id purpose readIds } } }",
                         s=sid, f=turn["reply"]["id"]))["spawnTask"]
    assert task["call"]["purpose"] == "TASK"
    assert task["userNode"]["callerId"] == turn["reply"]["id"]
    head = (await client("query($id: ID!) { session(id: $id) { headId } }", id=sid))["session"]
    assert head["headId"] == turn["reply"]["id"]

    reads = [session["rootId"], turn["userNode"]["id"], turn["reply"]["id"]]
    recorded = (await client("mutation($s: ID!, $r: [ID!]!) { recordCall(sessionId: $s,"
                             " readIds: $r, model: \"their-model\", output: \"external reply\","
                             " inputTokens: 5, outputTokens: 2) { id purpose readIds model"
                             " inputTokens output { id content predecessorId } } }",
                             s=sid, r=reads))["recordCall"]
    assert recorded["purpose"] == "EXTERNAL" and recorded["readIds"] == reads
    assert recorded["output"]["predecessorId"] == turn["reply"]["id"]

    call = (await client("query($c: ID!) { call(id: $c) { id reads { id content } readIds"
                         " outputId createdAt } }", c=turn["call"]["id"]))["call"]
    assert [n["id"] for n in call["reads"]] == call["readIds"] == turn["call"]["readIds"]
    readers = (await client("query($n: ID!) { callsReading(nodeId: $n) { id purpose } }",
                            n=turn["reply"]["id"]))["callsReading"]
    assert {r["id"] for r in readers} == {task["call"]["id"], recorded["id"]}
    calls = (await client("query($id: ID!) { session(id: $id) { calls { id purpose } } }",
                          id=sid))["session"]["calls"]
    assert [c["purpose"] for c in calls] == ["CHAT", "TASK", "EXTERNAL"]

    # How the external call's prompt differs from the chat call's: the reply was added.
    diff = (await client("query($a: ID!, $b: ID!) { callDiff(first: $a, second: $b) {"
                         " first { id } second { id } addedIds added { id role } removedIds"
                         " movedIds moved { id } } }", a=turn["call"]["id"],
                         b=recorded["id"]))["callDiff"]
    assert (diff["first"]["id"], diff["second"]["id"]) == (turn["call"]["id"], recorded["id"])
    assert diff["addedIds"] == [turn["reply"]["id"]]
    assert diff["added"] == [{"id": turn["reply"]["id"], "role": "ASSISTANT"}]
    assert diff["removedIds"] == diff["movedIds"] == [] and diff["moved"] == []
    errors = await client.errors("query($a: ID!) { callDiff(first: $a, second: \"cal_missing\")"
                                 " { addedIds } }", a=recorded["id"])
    assert errors[0]["extensions"]["code"] == "NOT_FOUND"


async def test_compaction_through_the_api_and_the_capsule_contract(api):
    client = api.client
    session = await new_session(client)
    sid = session["id"]
    append = ("mutation($s: ID!, $r: Role!, $c: String!, $p: ID, $k: ID) { appendMessage("
              "sessionId: $s, role: $r, content: $c, predecessorId: $p, callerId: $k) { id } }")

    async def add(role, text, predecessor=None, caller=None):
        return (await client(append, s=sid, r=role, c=text.ljust(100, "x"), p=predecessor,
                             k=caller))["appendMessage"]["id"]

    m0 = await add("USER", "Question 0. ")
    m1 = await add("ASSISTANT", "Calling a tool. ")
    tool = await add("TOOL", "Tool result. ", caller=m1)  # on the chain, folded with m1
    m2 = await add("USER", "Question 2. ")
    m3 = await add("ASSISTANT", "Answer 3. ")
    task = (await client("mutation($s: ID!, $f: ID!) { spawnTask(sessionId: $s, fromNodeId: $f,"
                         " prompt: \"Look it up.\") { userNode { id } reply { id } } }",
                         s=sid, f=m1))["spawnTask"]
    fork = (await client("mutation($n: ID!) { editMessage(nodeId: $n, content: \"Other 2.\") {"
                         " userNode { id } reply { id } } }", n=m2))["editMessage"]
    stray = await add("TOOL", "A tool run on the fork. ", predecessor=fork["reply"]["id"],
                      caller=m1)
    await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) { id } }",
                 s=sid, n=m3)
    tail = [await add("USER", f"Question {i}. ") if i % 2 == 0 else
            await add("ASSISTANT", f"Answer {i}. ") for i in range(4, 8)]
    first = (await client("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 100) {"
                          " status coveredCount summary { id coversIds superseded } } }",
                          s=sid))["compact"]
    assert first["status"] == "COMPACTED"
    assert first["summary"]["coversIds"] == [m0, m1, tool, m2, m3]
    more = [await add("USER", "Question 8. "), await add("ASSISTANT", "Answer 9. ")]
    second = (await client("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 50) {"
                           " status tokensBefore tokensAfter summary { id coversIds } } }",
                           s=sid))["compact"]
    assert second["status"] == "COMPACTED"
    assert second["summary"]["coversIds"] == [m0, m1, tool, m2, m3, *tail]
    await client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s, tipId: $t) { id } }",
                 s=sid, t=stray)

    data = await client("query($id: ID!) { session(id: $id) { headId activeSummary { id"
                        " superseded } extraMeta graph { nodes { id role predecessorId callerId"
                        " isHead coversIds supersededSummary foldedInto drawnFromId sideBranch"
                        " preview tokens deleted } } render { nodeIds summaryId } } }",
                        id=sid)
    s = data["session"]
    rows = {r["id"]: r for r in s["graph"]["nodes"]}
    active, relic = second["summary"]["id"], first["summary"]["id"]
    assert s["activeSummary"] == {"id": active, "superseded": False}
    assert s["extraMeta"]["_last_summary_id"] == active
    # The active summary's row: its coverage plus caller subtrees of covered turns (the
    # spawned task under m1), minus ids that no longer exist (the deleted stray tool run).
    assert rows[active]["coversIds"] == [
        m0, m1, tool, task["userNode"]["id"], task["reply"]["id"], m2, m3, *tail]
    assert rows[active]["supersededSummary"] is False
    assert rows[relic]["supersededSummary"] is True and rows[relic]["coversIds"] is None
    assert all(r["coversIds"] is None for i, r in rows.items() if i != active)
    assert stray not in rows and fork["userNode"]["id"] not in rows
    assert [i for i, r in rows.items() if r["isHead"]] == [s["headId"]] == [more[-1]]
    assert s["render"]["nodeIds"] == [session["rootId"], active, *more]
    assert s["render"]["summaryId"] == active
    # Drawing: exactly the capsule's coversIds fold into it; the first turn kept below
    # its segment hangs from it; everything else hangs from its own predecessor.
    assert {i for i, r in rows.items() if r["foldedInto"] == active} == set(
        rows[active]["coversIds"])
    assert all(r["foldedInto"] in (None, active) for r in rows.values())
    hangs = {i: r["drawnFromId"] for i, r in rows.items() if r["foldedInto"] is None}
    assert hangs[more[0]] == active and hangs[active] == hangs[relic] == session["rootId"]
    assert all(hangs[i] == rows[i]["predecessorId"] for i in hangs if i != more[0])
    assert rows[task["reply"]["id"]]["sideBranch"] and not rows[m0]["sideBranch"]
    assert rows[m0]["preview"] and rows[m0]["tokens"] > 0 and not rows[m0]["deleted"]

    ghosts = (await client("query($id: ID!) { session(id: $id) { graph(includeDeleted: true)"
                           " { nodes { id deleted foldedInto } } } }", id=sid))["session"]
    ghost_rows = {r["id"]: r for r in ghosts["graph"]["nodes"]}
    assert ghost_rows[stray]["deleted"] and ghost_rows[fork["userNode"]["id"]]["deleted"]
    assert {i for i, r in ghost_rows.items() if not r["deleted"]} == set(rows)


COMPACT = ("mutation($s: ID!, $i: String) { compact(sessionId: $s, keepRecentTokens: 100,"
           " instructions: $i) { status summary { id instructions content } } }")
STATE = ("query($id: ID!) { session(id: $id) { headId activeSummary { id instructions }"
         " graph { nodes { id } } calls { id } } }")


async def test_compact_with_focus_instructions_through_the_api(api):
    client = api.client
    session = await new_session(client)
    sid = session["id"]
    for i in range(4):
        await send(client, sid, f"Question {i}. ".ljust(200, "x"))
    before = await client(STATE, id=sid)
    focus = "Keep every number the user gave."
    for bad, says in (("", "blank"), (" \n ", "blank"), ("x" * 4001, "the limit is 4000")):
        errors = await client.errors(COMPACT, s=sid, i=bad)
        assert errors[0]["extensions"]["code"] == "BAD_INPUT", errors
        assert says in errors[0]["message"]
        assert await client(STATE, id=sid) == before  # nothing written

    compacted = (await client(COMPACT, s=sid, i=focus))["compact"]
    assert compacted["status"] == "COMPACTED"
    assert compacted["summary"]["instructions"] == focus
    assert "ignored by the offline summarizer" in compacted["summary"]["content"]
    after = (await client(STATE, id=sid))["session"]
    assert after["activeSummary"] == {"id": compacted["summary"]["id"], "instructions": focus}

    for i in range(4, 8):
        await send(client, sid, f"Question {i}. ".ljust(200, "x"))
    plain = (await client(COMPACT, s=sid))["compact"]  # no instructions: none stored
    assert plain["status"] == "COMPACTED" and plain["summary"]["instructions"] is None
    assert "ignored" not in plain["summary"]["content"]
