"""Branch summaries through the real anthropic SDK, against the local stub of the Messages
API (docs/concepts/annotations.md, docs/guides/tool-sets.md): carryOver and
checkout(summarizeLeft) send the left branch's own request — its tip's render as messages,
tool uses and results as blocks, images as images, thinking verbatim — with the tool set in
force at that tip and the branch-summary instruction appended; the call reads exactly that
render and names that tool set. A branch left in open tool uses sends them as text; a tip
with no tool set sends no tools; a failed summary writes no carry node and leaves HEAD."""
from __future__ import annotations

import base64

import pytest

from service.errors import ModelUnavailable
from service.llm.prompts import BRANCH_SUMMARY_SYSTEM
from service.store import Role
from service.turns import tool_sets
from service.turns.requests import Options, anthropic_messages
from tests.integration.helpers import head_id, session_calls, snapshot, without_event_counters
from tests.provider_requests import assert_valid_anthropic, uncached
from tests.stubs.anthropic_stub import MESSAGES_PATH, overloaded, reply
from tests.unit.test_blocks import png

READ_FILE = {"name": "read_file", "description": "Reads a file.",
             "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                              "required": ["path"]}}
GREP = {"name": "grep", "description": "Finds text.",
        "input_schema": {"type": "object", "properties": {"pattern": {"type": "string"}}}}
SIGNED = {"type": "thinking", "thinking": "Read a.txt first.", "signature": "c2lnLWE="}


@pytest.fixture
def runtime(anthropic_runtime):
    return anthropic_runtime(CTXDAG_ANTHROPIC_MAX_RETRIES="0")


def sent(stub) -> list[dict]:
    return [r.body for r in stub.requests if r.path == MESSAGES_PATH]


def block_types(body: dict) -> list[str]:
    return [b["type"] for m in body["messages"] if isinstance(m["content"], list)
            for b in m["content"]]


async def forked(ledger, *, tools: bool = True, open_tip: bool = False):
    """ROOT, a trunk exchange; branch A: a question with an image, a reply thinking and using
    read_file, its result, an answer (or, `open_tip`, a reply that thinks and opens another
    tool use); branch B from the trunk: one exchange, HEAD on its tip. With `tools`: the
    session's set offers grep, and a later set anchored on A's question offers read_file,
    so the two tips are offered different tools. Returns (session, trunk, A, B) node lists."""
    session = await ledger.sessions.create("carry", "You read files.")

    async def append(role, content=None, **kwargs):
        return (await ledger.head.append_message(session.id, role, content, **kwargs)).node

    trunk = [await append("user", "Let us inspect the repository."),
             await append("assistant", "Ready.")]
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": base64.b64encode(png(16, 8)).decode()}}
    a = [await append("user", blocks=[{"type": "text", "text": "What does a.txt hold? "
                                       "Compare it with this picture."}, image])]
    if tools:
        await tool_sets.set_tools(ledger, session.id, [GREP])
        await tool_sets.set_tools(ledger, session.id, [READ_FILE], head_id=a[0].id)
    a.append(await append("assistant", blocks=[
        SIGNED, {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_ca1", "name": "read_file",
         "input": {"path": "a.txt"}}]))
    a.append(await append("tool", blocks=[{"type": "tool_result", "tool_use_id": "toolu_ca1",
                                           "content": "alpha beta"}]))
    if open_tip:
        a.append(await append("assistant", blocks=[
            {"type": "thinking", "thinking": "Now b.txt.", "signature": "c2lnLWI="},
            {"type": "tool_use", "id": "toolu_ca2", "name": "read_file",
             "input": {"path": "b.txt"}}]))
    else:
        a.append(await append("assistant", "a.txt holds alpha beta; the picture is blank."))
    await ledger.head.set_head(session.id, trunk[-1].id)
    b = [await append("user", "Look at the README instead."),
         await append("assistant", "The README is short.")]
    return session, trunk, a, b


async def the_call(ledger, session_id: str, output_id: str | None = None, *, failed=False):
    calls = await session_calls(ledger, session_id)
    (call,) = [c for c in calls if c.error_code is not None] if failed else \
        [c for c in calls if c.output_id == output_id]
    return call, [n.id for n in await ledger.calls.reads(call.id)]


async def own_request(ledger, session_id: str, tip: str) -> dict:
    """The request a client gets for the tip's render (RenderedContext.request), uncached."""
    view = await ledger.views.render(session_id, tip)
    options = await tool_sets.offered(ledger, session_id, tip, Options())
    return uncached(anthropic_messages(view.nodes, await ledger.nodes.media_of(view.nodes),
                                       options)), [n.id for n in view.nodes]


async def test_a_carry_over_sends_the_left_branchs_own_request_with_its_tools(runtime, stub):
    ledger = runtime.ledger
    session, trunk, a, b = await forked(ledger)
    expected, rendered = await own_request(ledger, session.id, a[-1].id)
    version = await ledger.tool_sets.in_force(session.id, a[-1].id)
    assert [t["name"] for t in version.tools] == ["read_file"]  # B's is grep

    stub.enqueue(reply("## Goal\n- read a.txt: alpha beta", 900, 40))
    result = await runtime.carrier.carry_over(session.id, a[-1].id, b[-1].id,
                                              instructions="Keep the file's words.")
    node = result.carried.node
    assert result.carried.carried_ids == tuple(n.id for n in a)
    assert node.content == "## Goal\n- read a.txt: alpha beta" and node.predecessor_id == b[-1].id
    assert node.metadata["summarizer"] == "anthropic" and node.metadata["input_tokens"] == 900
    assert await head_id(ledger, session.id) == node.id

    (body,) = sent(stub)
    assert_valid_anthropic(body)
    # The left tip's own request, its tools first; real blocks for what A holds.
    assert [t["name"] for t in body["tools"]] == ["read_file"]
    assert {"image", "thinking", "tool_use", "tool_result"} <= set(block_types(body))
    thinking = next(b for m in body["messages"] if isinstance(m["content"], list)
                    for b in m["content"] if b["type"] == "thinking")
    assert thinking == SIGNED
    plain = uncached(body)
    assert plain["messages"][:-1] == expected["messages"]
    assert plain["system"] == expected["system"] and plain["tools"] == expected["tools"]
    # ... then the instruction: the branch summary's, naming where the branch begins.
    instruction = plain["messages"][-1]
    assert instruction["role"] == "user"
    assert BRANCH_SUMMARY_SYSTEM in instruction["content"]
    assert ("from the message that begins \u201cWhat does a.txt hold? Compare it with this "
            "picture.") in instruction["content"]
    assert "<focus_instructions>\nKeep the file's words.\n</focus_instructions>" \
        in instruction["content"]
    assert "never got a result" not in instruction["content"]

    # The call: it produced the carry node, read exactly the tip's render, named its tools.
    call, reads = await the_call(ledger, session.id, node.id)
    assert reads == rendered and rendered[0] == trunk[0].predecessor_id  # ROOT first
    assert call.head_id == a[-1].id and call.provider == "anthropic"
    assert call.tools_sha256 == version.tools_sha256
    offered = await ledger.calls.tool_sets([call.tools_sha256])
    assert [t["name"] for t in offered[call.tools_sha256]] == ["read_file"]
    assert await ledger.violations(session.id) == []


async def test_checkout_summarize_left_over_open_tool_uses_sends_them_as_text(runtime, stub):
    ledger = runtime.ledger
    session, trunk, a, b = await forked(ledger, open_tip=True)
    await ledger.head.set_head(session.id, a[-1].id)  # HEAD on A's tip, its use open
    expected, rendered = await own_request(ledger, session.id, a[-2].id)

    stub.enqueue(reply("A read a.txt and was about to read b.txt."))
    result = await runtime.carrier.checkout(session.id, b[-1].id)
    node = result.carried.node
    assert await head_id(ledger, session.id) == node.id and node.predecessor_id == b[-1].id
    assert result.carried.carried_ids == tuple(n.id for n in a)

    (body,) = sent(stub)
    assert_valid_anthropic(body)
    assert [t["name"] for t in body["tools"]] == ["read_file"]
    plain = uncached(body)
    # Up to the open reply: the request of the tip before it, as sent then.
    assert plain["messages"][:len(expected["messages"])] == expected["messages"]
    left, instruction = plain["messages"][-2:]
    assert left["role"] == "assistant"
    assert left["content"][0] == {"type": "thinking", "thinking": "Now b.txt.",
                                  "signature": "c2lnLWI="}
    assert left["content"][1] == {"type": "text", "text": '<tool_use id="toolu_ca2" '
                                  'name="read_file">{"path": "b.txt"}</tool_use>'}
    assert [b["id"] for m in plain["messages"] if isinstance(m["content"], list)
            for b in m["content"] if b["type"] == "tool_use"] == ["toolu_ca1"]
    assert "ends in 1 tool call that never got a result" in instruction["content"]

    call, reads = await the_call(ledger, session.id, node.id)
    assert reads == rendered + [a[-1].id] and call.head_id == a[-1].id
    assert call.tools_sha256 == (await ledger.tool_sets.in_force(session.id, a[-1].id)
                                 ).tools_sha256
    assert await ledger.violations(session.id) == []


async def test_a_branch_whose_tip_has_no_tool_set_sends_no_tools(runtime, stub):
    ledger = runtime.ledger
    session, trunk, a, b = await forked(ledger, tools=False)
    assert await ledger.tool_sets.in_force(session.id, a[-1].id) is None
    stub.enqueue(reply("A read a.txt."))
    node = (await runtime.carrier.carry_over(session.id, a[-1].id, b[-1].id)).carried.node
    (body,) = sent(stub)
    assert_valid_anthropic(body)
    assert "tools" not in body and "tool_choice" not in body
    # The tool pair goes as text, as a request without its tool has it; the image stays one.
    assert "tool_use" not in block_types(body) and "image" in block_types(body)
    assert '<tool_use id="toolu_ca1" name="read_file">' in str(body["messages"])
    call, reads = await the_call(ledger, session.id, node.id)
    assert call.tools_sha256 is None and reads[-len(a):] == [n.id for n in a]


async def test_a_branch_a_summary_partly_stands_in_for_is_sent_whole_after_root(runtime, stub):
    """A compaction on A covered the trunk and A's first exchange: A's render no longer holds
    them verbatim, so the request is ROOT and A's turns (not a render: no head named)."""
    ledger = runtime.ledger
    session, trunk, a, b = await forked(ledger)
    await ledger.head.set_head(session.id, a[-1].id)
    more = [(await ledger.head.append_message(session.id, role, text)).node
            for role, text in (("user", "And b.txt?"), ("assistant", "Not read yet."))]
    stub.enqueue(reply("Summary of the trunk and a.txt."))
    compacted = await runtime.compactor.compact(session.id, up_to=a[-1].id)
    assert compacted.summary is not None, compacted.message
    await ledger.head.set_head(session.id, b[-1].id)

    stub.enqueue(reply("A read a.txt, then asked for b.txt."))
    node = (await runtime.carrier.carry_over(session.id, more[-1].id, b[-1].id)).carried.node
    body = sent(stub)[-1]
    assert_valid_anthropic(body)
    assert [t["name"] for t in body["tools"]] == ["read_file"]
    assert "all of it is the branch that was left" in uncached(body)["messages"][-1]["content"]
    assert "Summary of the trunk" not in str(body["messages"])
    call, reads = await the_call(ledger, session.id, node.id)
    root = trunk[0].predecessor_id
    assert reads == [root, *(n.id for n in a), *(n.id for n in more)]
    assert call.head_id is None
    assert await ledger.violations(session.id) == []


@pytest.mark.parametrize("move", ["carry_over", "checkout"])
async def test_a_failed_summary_writes_no_carry_node_and_leaves_head(runtime, stub, move):
    ledger = runtime.ledger
    session, trunk, a, b = await forked(ledger)
    if move == "checkout":
        await ledger.head.set_head(session.id, a[-1].id)
    head = await head_id(ledger, session.id)
    before = await snapshot(ledger, session.id)
    stub.enqueue(overloaded())
    with pytest.raises(ModelUnavailable):
        if move == "checkout":
            await runtime.carrier.checkout(session.id, b[-1].id)
        else:
            await runtime.carrier.carry_over(session.id, a[-1].id, b[-1].id)
    (body,) = sent(stub)
    assert_valid_anthropic(body)
    assert await head_id(ledger, session.id) == head
    # No node, no edge, no event: only the failed call is on record, as every call is.
    assert without_event_counters(await snapshot(ledger, session.id)) == \
        without_event_counters(before)
    call, reads = await the_call(ledger, session.id, failed=True)
    assert call.error_code == "MODEL_UNAVAILABLE" and call.output_id is None
    assert reads == (await own_request(ledger, session.id, a[-1].id))[1]
    assert call.tools_sha256 == (await ledger.tool_sets.in_force(session.id, a[-1].id)
                                 ).tools_sha256
    assert not any(n.role is Role.CARRY for n in await ledger.nodes.get_many(
        [n.id for n in (*trunk, *a, *b)]))
    assert await ledger.violations(session.id) == []
