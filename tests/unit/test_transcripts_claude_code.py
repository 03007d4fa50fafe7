"""Claude Code transcripts read without a database: what following a live file holds back,
and the bookkeeping lines newer versions write, of kinds the reader does not list."""
import json
from pathlib import Path

from service import transcripts
from service.model.validate import Limits
from service.transcripts import claude_code
from service.transcripts.follow import without_open_tail
from service.transcripts.model import DegradedKind, Mode

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


SESSION = "2cc1c994-bookkeeping"


def jsonl(*entries) -> str:
    return "".join(json.dumps(entry) + "\n" for entry in entries)


def chain(uuid, parent, kind, content):
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": SESSION,
            "timestamp": "2026-09-30T12:10:38.000Z", "isSidechain": False,
            "message": {"role": kind, "content": content,
                        **({"id": f"msg_{uuid}", "model": "claude-opus-5-5"}
                           if kind == "assistant" else {})}}


BRIDGE = {"type": "bridge-session", "sessionId": SESSION, "bridgeSessionId": "cse_1",
          "lastSequenceNum": 53874}
LATCH = {"type": "atis-latch", "atis": "", "sessionId": SESSION}


def test_bookkeeping_of_kinds_not_listed_is_passed_over_and_nothing_degrades():
    text = jsonl(BRIDGE, chain("u1", None, "user", "Test the speakers."), LATCH,
                 chain("a1", "u1", "assistant", [{"type": "text", "text": "Done."}]), BRIDGE)
    assert transcripts.detect(text, "s.jsonl") == claude_code.TOOL
    mode = Mode()
    document = transcripts.read(text, "s.jsonl", None, "t", Limits(), mode=mode)
    assert mode.degraded == []
    assert len(document["nodes"]) == 3  # ROOT, the prompt, the reply
    # Nothing degraded: the same text is recognised unparsed next time.
    assert "source_prefix_sha256" in document["session"]["properties"]


def test_an_entry_of_an_unknown_kind_in_the_chain_is_listed():
    text = jsonl(chain("u1", None, "user", "Hi."),
                 {"type": "teleport", "uuid": "x", "parentUuid": "u1", "sessionId": SESSION},
                 chain("a1", "x", "assistant", [{"type": "text", "text": "Hello."}]))
    mode = Mode()
    transcript = claude_code.parse(text, "s.jsonl", mode)
    assert [(d.line, d.kind) for d in mode.degraded] == [(2, DegradedKind.UNKNOWN_ENTRY)]
    assert [(t.key, t.parent) for t in transcript.turns] == [("u1", "root"), ("a1", "u1")]


def attachment(uuid, parent, text):
    return json.dumps({"type": "attachment", "uuid": uuid, "parentUuid": parent,
                       "sessionId": "s", "timestamp": "2025-06-02T09:00:00Z",
                       "attachment": {"type": "hook_additional_context"},
                       "rendered": [{"content": text}]}) + "\n"


def texts(turn):
    return [b["text"] for b in turn.blocks]


def test_attachments_keep_their_file_order_above_the_prompt_the_tool_moves_them_over():
    t = claude_code.parse("".join([
        attachment("t0", None, "start"),
        entry("user", "u1", "t0", "go"),
        attachment("t1", "u1", "submit"),
        attachment("t2", "t1", "memory"),
        entry("assistant", "a1", "t2", [{"type": "text", "text": "ok"}], "msg_1"),
        attachment("t3", "a1", "stop"),
        attachment("t4", "t3", "later"),
        entry("assistant", "a2", "t4", [{"type": "text", "text": "more"}], "msg_2"),
        attachment("t7", "t4", "late"),  # naming an attachment already read: after it
        attachment("t5", "a2", "after"),
        entry("user", "u2", "t5", "next"),
        attachment("t6", "u2", "submit again"),
    ]), "s.jsonl")
    assert [(x.key, x.role, texts(x)) for x in t.turns] == [
        ("u1", "user", ["start", "submit", "memory", "go"]),
        ("a1", "assistant", ["ok"]),
        ("t4", "user", ["stop", "later", "late"]),  # read before the next reply: its own turn
        ("a2", "assistant", ["more"]),
        ("u2", "user", ["after", "submit again", "next"])]
    assert [a["uuid"] for a in t.turns[0].meta["attachments"]] == ["t0", "t1", "t2"]
