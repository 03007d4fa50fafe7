"""Bring your own model: the two-step turn (beginTurn, completeTurn) over GraphQL against a
running service, the model being the real `anthropic` SDK talking to the local stub.

Every HEAD race (another message, a checkout, a checkout back, an edit, a deleted branch,
a compaction between the steps), an abandoned draft that expires and leaves nothing
behind, completing twice with one client key and once more with another, a failed model
call and the attempt after it, a turn begun with tool results. Each request body is
checked with the SDK's own types, and each call's READ edges against the draft's readIds.
`ctxdag check` runs over every session afterwards (the `checked` fixture).
"""
from __future__ import annotations

import asyncio

import anthropic
import neo4j
import pytest

from tests.api_client import GraphQLErrors
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai
from tests.stubs.anthropic_stub import MESSAGES_PATH, reply, tool_call

MESSAGE = "id role content predecessorId metadata toolUseIds"
DRAFT = f"""id sessionId headId readIds toolsSha256 fingerprint expiresAt
  userNode {{ {MESSAGE} }}
  anthropic: request(format: ANTHROPIC_MESSAGES, model: "claude-stub", maxTokens: 256)
  openai: request(format: OPENAI_CHAT, model: "gpt-x")"""
TURN = f"""userNode {{ id }} reply {{ {MESSAGE} }} callId error errorCode openToolUseIds
  headMoved replayed
  call {{ id provider model readIds headId outputId errorCode error inputTokens
         outputTokens cacheCreationInputTokens cacheReadInputTokens toolsSha256 }}"""
SESSION = "query($s: ID!) { session(id: $s) { headId nodeCount branches { tip { id } } " \
          "modelCalls(first: 100) { nodes { id errorCode } } } }"
LOOKUP = {"name": "lookup", "description": "Looks a word up.",
          "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}},
                          "required": ["word"]}}


async def new_session(client, checked, title="byom") -> str:
    data = await client("mutation($t: String) { createSession(title: $t, systemPrompt: "
                        "\"You answer briefly.\") { id } }", t=title)
    checked.append(data["createSession"]["id"])
    return data["createSession"]["id"]


async def begin(client, session_id, content=None, **more) -> dict:
    data = await client(
        "mutation($s: ID!, $c: String, $r: [ToolResultBlockInput!], $t: [ToolInput!], "
        "$ttl: Int) { beginTurn(sessionId: $s, content: $c, toolResults: $r, tools: $t, "
        f"ttlSeconds: $ttl) {{ {DRAFT} }} }}", s=session_id, c=content,
        r=more.get("results"), t=more.get("tools"), ttl=more.get("ttl"))
    draft = data["beginTurn"]
    assert_valid_anthropic(draft["anthropic"])
    assert_valid_openai(draft["openai"])
    return draft


async def complete(client, draft_id, key, **more) -> dict:
    data = await client(
        "mutation($d: ID!, $k: String!, $m: String!, $c: String, $b: [ContentBlockInput!], "
        "$u: UsageInput, $sr: String, $e: ModelFailureInput) { completeTurn(draftId: $d, "
        "clientKey: $k, model: $m, content: $c, blocks: $b, usage: $u, stopReason: $sr, "
        f"error: $e) {{ {TURN} }} }}", d=draft_id, k=key, m=more.get("model", "claude-stub"),
        c=more.get("content"), b=more.get("blocks"), u=more.get("usage"),
        sr=more.get("stop_reason"), e=more.get("error"))
    return data["completeTurn"]


async def complete_errors(client, draft_id, key, content="late") -> list[dict]:
    return await client.errors(
        "mutation($d: ID!, $k: String!, $c: String) { completeTurn(draftId: $d, clientKey: $k, "
        "model: \"m\", content: $c) { callId } }", d=draft_id, k=key, c=content)


async def state(client, session_id) -> dict:
    return (await client(SESSION, s=session_id))["session"]


async def rendered(client, session_id, head_id=None) -> list[str]:
    data = await client("query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) "
                        "{ nodeIds } } }", s=session_id, h=head_id)
    return data["session"]["render"]["nodeIds"]


async def ask_model(stub, body) -> anthropic.types.Message:
    """The runtime's own model call: the draft's body, sent as it is through the SDK."""
    model = anthropic.AsyncAnthropic(api_key="test-key", base_url=stub.base_url, max_retries=0)
    try:
        return await model.messages.create(**body)
    finally:
        await model.close()


def reply_blocks(message: anthropic.types.Message) -> list[dict]:
    out = []
    for block in message.content:
        if block.type == "text":
            out.append({"text": {"text": block.text}})
        elif block.type == "thinking":
            out.append({"thinking": {"thinking": block.thinking, "signature": block.signature}})
        elif block.type == "tool_use":
            out.append({"toolUse": {"id": block.id, "name": block.name, "input": block.input}})
    return out


def usage_of(message: anthropic.types.Message) -> dict:
    usage = message.usage
    return {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens,
            "cacheCreationInputTokens": usage.cache_creation_input_tokens,
            "cacheReadInputTokens": usage.cache_read_input_tokens}


def drafts_stored(service, session_id) -> list[str]:
    """The session's Draft nodes, read from Neo4j itself."""
    env = service.env
    auth = (env["NEO4J_USER"], env["NEO4J_PASSWORD"]) if env.get("NEO4J_PASSWORD") else None
    with neo4j.GraphDatabase.driver(env["NEO4J_URI"], auth=auth) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (d:Draft {session_id: $s}) RETURN d.id AS id ORDER BY id", s=session_id)
    return [r["id"] for r in records]


async def test_begin_then_complete_through_the_anthropic_sdk(client, checked, stub, service):
    s = await new_session(client, checked)
    draft = await begin(client, s, "What is a ledger?")
    user = draft["userNode"]
    assert user["role"] == "USER" and user["content"] == "What is a ledger?"
    assert draft["headId"] == user["id"] == (await state(client, s))["headId"]
    assert draft["readIds"] == await rendered(client, s)  # what the request holds
    assert draft["toolsSha256"] is None and len(draft["fingerprint"]) == 64

    stub.enqueue(reply("A book of accounts.", input_tokens=30, output_tokens=6))
    message = await ask_model(stub, draft["anthropic"])
    sent = [r.body for r in stub.requests if r.path == MESSAGES_PATH][-1]
    assert sent == draft["anthropic"]
    turn = await complete(client, draft["id"], "attempt-1", blocks=reply_blocks(message),
                          usage=usage_of(message), stop_reason=message.stop_reason)
    assert turn["error"] is None and turn["headMoved"] is True and turn["replayed"] is False
    assert turn["userNode"]["id"] == user["id"]
    assert turn["reply"]["content"] == "A book of accounts."
    assert turn["reply"]["predecessorId"] == draft["headId"]
    assert turn["reply"]["metadata"]["stop_reason"] == "end_turn"
    call = turn["call"]
    assert call["readIds"] == draft["readIds"], "READ edges are exactly the draft's reads"
    assert (call["provider"], call["model"], call["headId"]) == (
        "external", "claude-stub", draft["headId"])
    assert (call["inputTokens"], call["outputTokens"]) == (30, 6)
    assert call["outputId"] == turn["reply"]["id"]
    after = await state(client, s)
    assert after["headId"] == turn["reply"]["id"]
    assert await rendered(client, s) == draft["readIds"] + [turn["reply"]["id"]]
    assert drafts_stored(service, s) == [draft["id"]], "kept to answer a repeated completion"

    # The next turn renders the reply: the conversation grew as sendMessage grows it.
    second = await begin(client, s, "And a journal?")
    assert second["readIds"][:-1] == draft["readIds"] + [turn["reply"]["id"]]


async def test_a_turn_begun_with_tool_results(client, checked, stub):
    s = await new_session(client, checked, "byom tools")
    first = await begin(client, s, "Please look up ledger.", tools=[LOOKUP])
    assert first["anthropic"]["tools"][0]["name"] == "lookup"
    assert first["toolsSha256"] is not None
    stub.enqueue(tool_call(("toolu_byom_1", "lookup", {"word": "ledger"}), text="Looking."))
    message = await ask_model(stub, first["anthropic"])
    turn = await complete(client, first["id"], "k", blocks=reply_blocks(message),
                          stop_reason=message.stop_reason, usage=usage_of(message))
    assert turn["openToolUseIds"] == ["toolu_byom_1"]
    assert turn["call"]["toolsSha256"] == first["toolsSha256"], "the tools it was offered"

    refused = await client.errors(
        "mutation($s: ID!) { beginTurn(sessionId: $s, content: \"hello?\") { id } }", s=s)
    assert refused[0]["extensions"]["code"] == "BAD_INPUT"
    assert "toolu_byom_1" in refused[0]["message"]

    second = await begin(client, s, results=[{"toolUseId": "toolu_byom_1",
                                              "content": "a book of accounts"}],
                         tools=[LOOKUP])
    assert second["userNode"]["role"] == "TOOL"
    last = second["anthropic"]["messages"][-1]
    assert last["content"][0]["type"] == "tool_result"
    assert last["content"][0]["tool_use_id"] == "toolu_byom_1"
    stub.enqueue(reply("Ledger: a book of accounts."))
    message = await ask_model(stub, second["anthropic"])
    done = await complete(client, second["id"], "k", blocks=reply_blocks(message))
    assert done["openToolUseIds"] == [] and done["headMoved"] is True
    assert done["call"]["readIds"] == second["readIds"]


async def test_head_moved_by_another_message_leaves_the_reply_on_a_branch(client, checked):
    s = await new_session(client, checked, "race: message")
    draft = await begin(client, s, "First question.")
    # Another client sends a message meanwhile: it extends HEAD (the draft's tip).
    other = (await client("mutation($s: ID!) { sendMessage(sessionId: $s, content: "
                          "\"Second question.\") { reply { id } } }", s=s))["sendMessage"]
    head = (await state(client, s))["headId"]
    assert head == other["reply"]["id"]

    turn = await complete(client, draft["id"], "k", content="Answer to the first.")
    assert turn["headMoved"] is False, "HEAD stays where the other message put it"
    assert turn["reply"]["predecessorId"] == draft["headId"]
    after = await state(client, s)
    assert after["headId"] == head
    tips = {b["tip"]["id"] for b in after["branches"]}
    assert {head, turn["reply"]["id"]} <= tips, "the reply ends a branch of its own"
    assert turn["call"]["readIds"] == draft["readIds"]


async def test_head_moved_by_a_checkout_and_back(client, checked):
    s = await new_session(client, checked, "race: checkout")
    one = await begin(client, s, "One.")
    await complete(client, one["id"], "k", content="Reply one.")
    two = await begin(client, s, "Two.")
    root = (await rendered(client, s))[0]

    # Checked out elsewhere: the reply does not pull HEAD back.
    await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) { headId } }",
                 s=s, n=one["headId"])
    turn = await complete(client, two["id"], "k", content="Reply two.")
    assert turn["headMoved"] is False
    assert (await state(client, s))["headId"] == one["headId"]

    # Checked out back onto the tip before completing: the reply extends HEAD again.
    three = await begin(client, s, "Three.")  # at HEAD (one's user message): a branch
    await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) { headId } }",
                 s=s, n=root)
    await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) { headId } }",
                 s=s, n=three["headId"])
    back = await complete(client, three["id"], "k", content="Reply three.")
    assert back["headMoved"] is True
    assert (await state(client, s))["headId"] == back["reply"]["id"]


async def test_head_moved_by_an_edit_and_a_deleted_branch(client, checked):
    s = await new_session(client, checked, "race: edit, delete")
    draft = await begin(client, s, "Original question.")
    edited = (await client("mutation($n: ID!) { editMessage(nodeId: $n, content: \"Edited.\") "
                           "{ reply { id } } }", n=draft["headId"]))["editMessage"]
    turn = await complete(client, draft["id"], "k", content="Answer to the original.")
    assert turn["headMoved"] is False
    assert (await state(client, s))["headId"] == edited["reply"]["id"]
    assert turn["reply"]["predecessorId"] == draft["headId"]

    # A draft whose tip is deleted with its branch: its reply has nowhere to go.
    gone = await begin(client, s, "Doomed question.")
    await client("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) { headId } }",
                 s=s, n=edited["reply"]["id"])
    await client("mutation($s: ID!, $t: ID!) { deleteBranch(sessionId: $s, tipId: $t) { headId } }",
                 s=s, t=gone["headId"])
    before = await state(client, s)
    errors = await complete_errors(client, gone["id"], "k")
    assert errors[0]["extensions"]["code"] == "CONFLICT"
    assert "deleted with its branch" in errors[0]["message"]
    assert await state(client, s) == before, "nothing written"
    # The call itself can still be recorded: as an attempt without a reply.
    failed = await complete(client, gone["id"], "k2",
                            error={"code": "MODEL_ERROR", "message": "nowhere to answer"})
    assert failed["reply"] is None and failed["call"]["readIds"] == gone["readIds"]


async def test_a_compaction_between_the_steps_changes_nothing_the_call_read(client, checked):
    s = await new_session(client, checked, "race: compaction")
    for i in range(3):
        d = await begin(client, s, f"Question {i}. " + "words " * 40)
        await complete(client, d["id"], "k", content=f"Answer {i}. " + "more " * 40)
    draft = await begin(client, s, "Last question.")
    compacted = await client("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 0) "
                             "{ status summary { id } } }", s=s)
    assert compacted["compact"]["status"] == "COMPACTED"
    assert await rendered(client, s) != draft["readIds"]
    turn = await complete(client, draft["id"], "k", content="Answer.")
    assert turn["call"]["readIds"] == draft["readIds"], "what the request held, not today's render"
    assert turn["headMoved"] is True


async def test_completing_twice_with_one_key_and_again_with_another(client, checked):
    s = await new_session(client, checked, "double complete")
    draft = await begin(client, s, "Once.")
    first = await complete(client, draft["id"], "key-1", content="The answer.")
    before = await state(client, s)
    again = await complete(client, draft["id"], "key-1", content="A different body.")
    assert again["replayed"] is True
    assert again["callId"] == first["callId"]
    assert again["reply"]["id"] == first["reply"]["id"]
    assert again["reply"]["content"] == "The answer.", "the first completion's reply"
    assert again["headMoved"] is True
    assert await state(client, s) == before, "nothing written"

    errors = await complete_errors(client, draft["id"], "key-2")
    assert errors[0]["extensions"]["code"] == "CONFLICT"
    assert first["callId"] in errors[0]["message"]
    assert await state(client, s) == before

    # Two completions racing with one key: one writes, the other is answered from it.
    racing = await begin(client, s, "Twice at once.")
    both = await asyncio.gather(*(complete(client, racing["id"], "same", content=f"Reply {i}.")
                                  for i in range(2)))
    assert both[0]["callId"] == both[1]["callId"]
    assert sorted(t["replayed"] for t in both) == [False, True]
    assert len((await state(client, s))["modelCalls"]["nodes"]) == 2


async def test_a_failed_model_call_then_a_second_attempt(client, checked):
    s = await new_session(client, checked, "failed call")
    draft = await begin(client, s, "Will this fail?")
    failed = await complete(client, draft["id"], "attempt-1", error={
        "code": "MODEL_UNAVAILABLE", "message": "Anthropic is overloaded (HTTP 529)"})
    assert failed["reply"] is None and failed["headMoved"] is None
    assert failed["errorCode"] == "MODEL_UNAVAILABLE"
    assert failed["call"]["errorCode"] == "MODEL_UNAVAILABLE"
    assert failed["call"]["readIds"] == draft["readIds"]
    assert failed["call"]["outputId"] is None
    after = await state(client, s)
    assert after["headId"] == draft["headId"], "HEAD stays on the message"

    # The draft stays open: the runtime's retry completes it.
    done = await complete(client, draft["id"], "attempt-2", content="It did not.")
    assert done["headMoved"] is True and done["call"]["readIds"] == draft["readIds"]
    calls = (await state(client, s))["modelCalls"]["nodes"]
    assert [c["errorCode"] for c in calls] == ["MODEL_UNAVAILABLE", None]
    replay = await complete(client, draft["id"], "attempt-1", content="ignored")
    assert replay["replayed"] is True and replay["callId"] == failed["callId"]
    assert replay["errorCode"] == "MODEL_UNAVAILABLE" and replay["reply"] is None

    # beginTurn with no message answers HEAD as it stands (after a failure, an append).
    await client("mutation($s: ID!) { appendMessage(sessionId: $s, role: USER, content: "
                 "\"Appended by hand.\") { id } }", s=s)
    head = (await state(client, s))["headId"]
    answer = await begin(client, s)
    assert answer["userNode"] is None and answer["headId"] == head
    done = await complete(client, answer["id"], "k", content="Answered.")
    assert done["reply"]["predecessorId"] == head


async def test_an_abandoned_draft_expires_and_leaves_nothing(client, checked, service):
    s = await new_session(client, checked, "abandoned")
    draft = await begin(client, s, "Anyone there?", ttl=1)
    before = await state(client, s)
    assert drafts_stored(service, s) == [draft["id"]]
    await asyncio.sleep(1.5)  # past its expiry (a bound on time passed, not a timing claim)

    errors = await complete_errors(client, draft["id"], "k")
    assert errors[0]["extensions"]["code"] == "NOT_FOUND"
    assert "expired" in errors[0]["message"]
    assert await state(client, s) == before, "no reply, no call"
    assert before["modelCalls"]["nodes"] == []
    assert before["headId"] == draft["headId"], "the message stays, HEAD on it"

    # The session's next draft forgets it: nothing of it is stored any more.
    fresh = await begin(client, s)
    assert drafts_stored(service, s) == [fresh["id"]]
    errors = await complete_errors(client, draft["id"], "k")
    assert errors[0]["extensions"]["code"] == "NOT_FOUND"
    assert "unknown" in errors[0]["message"]
    done = await complete(client, fresh["id"], "k", content="Yes.")
    assert done["reply"]["predecessorId"] == draft["headId"]


@pytest.mark.parametrize("query, code", [
    ("beginTurn(sessionId: $s, content: \"a\", toolResults: [{toolUseId: \"x\", "
     "content: \"y\"}]) { id }", "BAD_INPUT"),
    ("beginTurn(sessionId: $s, content: \"a\", ttlSeconds: 0) { id }", "BAD_INPUT"),
    ("beginTurn(sessionId: $s) { id }", "BAD_INPUT"),  # HEAD is ROOT: nothing to answer
    # a session's id names no draft
    ("completeTurn(draftId: $s, clientKey: \"k\", model: \"m\", content: \"a\") { callId }",
     "NOT_FOUND"),
    ("completeTurn(draftId: $s, clientKey: \" \", model: \"m\", content: \"a\") { callId }",
     "BAD_INPUT"),
])
async def test_refused_requests_write_nothing(client, checked, query, code):
    s = await new_session(client, checked, "refused")
    before = await state(client, s)
    errors = await client.errors(f"mutation($s: ID!) {{ {query} }}", s=s)
    assert errors[0]["extensions"]["code"] == code
    assert await state(client, s) == before
