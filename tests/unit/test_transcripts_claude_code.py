"""Claude Code transcripts read without a database: what following a live file holds back."""
import json
from pathlib import Path

from service.transcripts import claude_code
from service.transcripts.follow import without_open_tail

STREAMED = Path(__file__).parent.parent / "fixtures" / "transcripts" / "claude_code" / \
    "streamed.jsonl"


def test_follow_holds_back_a_response_whose_tools_ran_while_it_streams():
    # Cut after the first tool's result: the response may go on below it (a2 … a4).
    lines = STREAMED.read_text().splitlines(keepends=True)
    cut = claude_code.parse("".join(lines[:4]), STREAMED.name)
    assert [t.key for t in cut.turns] == ["u1", "a2", "r1"]
    held = without_open_tail(cut, quiet=False)
    assert held.head == "u1" and [t.key for t in held.turns] == ["u1"]
    assert without_open_tail(cut, quiet=True).head == "r1"
    whole = claude_code.parse("".join(lines[:9]), STREAMED.name)  # the next response, a5
    assert without_open_tail(whole, quiet=False).head == "r2"


def entry(kind, uuid, parent, content, message_id=None):
    message = {"role": kind, "content": content}
    if message_id:
        message.update(id=message_id, model="claude-sonnet-4-5", type="message")
    line = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s",
            "timestamp": "2025-06-02T09:00:00Z", "message": message}
    if message_id:
        line["requestId"] = f"req_{message_id}"
    return json.dumps(line) + "\n"


def use(use_id):
    return [{"type": "tool_use", "id": use_id, "name": "Read", "input": {}}]


def result(use_id):
    return [{"type": "tool_result", "tool_use_id": use_id, "content": "ok"}]


def test_what_hangs_from_a_folded_entry_goes_on_after_the_results_written_so_far():
    # The user interrupts the response after its second tool use, before that tool's result.
    t = claude_code.parse("".join([
        entry("user", "u1", None, "go"),
        entry("assistant", "a1", "u1", use("t1"), "msg_1"),
        entry("user", "r1", "a1", result("t1")),
        entry("assistant", "a2", "r1", use("t2"), "msg_1"),
        entry("user", "u2", "a2", "[Request interrupted by user]"),
    ]), "s.jsonl")
    assert [(x.key, x.parent, x.role) for x in t.turns] == [
        ("u1", "root", "user"), ("a2", "u1", "assistant"), ("r1", "a2", "tool"),
        ("u2", "r1", "user")]
    assert [b["id"] for b in t.turns[1].blocks] == ["t1", "t2"]


def test_another_response_after_a_tool_result_is_a_message_of_its_own():
    t = claude_code.parse("".join([
        entry("user", "u1", None, "go"),
        entry("assistant", "a1", "u1", use("t1"), "msg_1"),
        entry("user", "r1", "a1", result("t1")),
        entry("assistant", "a2", "r1", [{"type": "text", "text": "done"}], "msg_2"),
    ]), "s.jsonl")
    assert [(x.key, x.parent) for x in t.turns] == [
        ("u1", "root"), ("a1", "u1"), ("r1", "a1"), ("a2", "r1")]
