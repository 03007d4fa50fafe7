"""Codex rollout parsing and --follow's held tail, without a database."""
import json

import pytest

from service.errors import BadInput
from service.transcripts import codex
from service.transcripts.follow import without_open_tail


def rollout(*items) -> str:
    lines = [{"timestamp": "2025-09-14T08:00:00Z", "type": "session_meta",
              "payload": {"id": "s"}}]
    for kind, payload in items:
        lines.append({"timestamp": "2025-09-14T08:00:01Z", "type": kind, "payload": payload})
    return "".join(json.dumps(line) + "\n" for line in lines)


def user(text):
    return ("response_item", {"type": "message", "role": "user",
                              "content": [{"type": "input_text", "text": text}]})


def call(call_id, arguments):
    return ("response_item", {"type": "function_call", "name": "shell",
                              "arguments": arguments, "call_id": call_id})


def output(call_id, text="ok"):
    return ("response_item", {"type": "function_call_output", "call_id": call_id,
                              "output": text})


def reply(text):
    return ("response_item", {"type": "message", "role": "assistant",
                              "content": [{"type": "output_text", "text": text}]})


def test_arguments_that_are_no_json_object_are_wrapped():
    t = codex.parse(rollout(user("go"), call("c1", "[1, 2]"), call("c2", "rm -rf"),
                            output("c1"), output("c2")), "r.jsonl")
    calls = t.turns[1]
    assert [b["input"] for b in calls.blocks] == [{"arguments": [1, 2]}, {"arguments": "rm -rf"}]
    assert calls.meta["unparsed_arguments"] == ["c2"]


def test_a_rollback_past_a_compaction_is_refused_naming_its_line():
    text = rollout(user("one"), reply("1"), ("compacted", {"message": "summary"}),
                   user("two"), reply("2"),
                   ("event_msg", {"type": "thread_rolled_back", "num_turns": 2}))
    with pytest.raises(BadInput) as caught:
        codex.parse(text, "r.jsonl")
    assert caught.value.message.startswith("r.jsonl:7: a rollback to before a compaction")


def test_a_rollback_of_more_turns_than_there_are_keeps_the_context_before_the_first():
    context = ("response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]})
    t = codex.parse(rollout(context, user("one"), reply("1"),
                            ("event_msg", {"type": "thread_rolled_back", "num_turns": 5}),
                            user("again")), "r.jsonl")
    assert t.turns[-1].parent == t.turns[0].key == "line2"
    assert t.head == "line6"


def test_follow_holds_a_growing_tail_back():
    parallel = rollout(user("go"), call("c1", "{}"), call("c2", "{}"), output("c1"))
    held = without_open_tail(codex.parse(parallel, "r.jsonl"), quiet=True)
    assert held.head == "line2" and [t.key for t in held.turns] == ["line2"]
    answered = codex.parse(rollout(user("go"), call("c1", "{}"), output("c1"), reply("done")),
                           "r.jsonl")
    assert without_open_tail(answered, quiet=False).head == "line4"
    assert without_open_tail(answered, quiet=True).head == "line5"


def developer(text):
    return ("response_item", {"type": "message", "role": "developer",
                               "content": [{"type": "input_text", "text": text}]})


def test_lines_between_calls_and_outputs_wait_for_the_results():
    # Parallel calls, their outputs interleaved by a developer message, the user's steering
    # and reasoning: one tool message, then what waited, in its order.
    t = codex.parse(rollout(user("go"), call("c1", "{}"), reply("running"), call("c2", "{}"),
                            output("c2"), developer("<note>"), user("faster"),
                            ("response_item", {"type": "reasoning", "summary": []}),
                            output("c1"), reply("done")), "r.jsonl")
    assert [(x.key, x.role, x.parent) for x in t.turns] == [
        ("line2", "user", "root"), ("line5", "assistant", "line2"),
        ("line10", "tool", "line5"), ("line7", "user", "line10"), ("line8", "user", "line7"),
        ("line11", "assistant", "line8")]
    assert [b["tool_use_id"] for b in t.turns[2].blocks] == ["c2", "c1"]
    assert t.turns[5].entries == ("line9", "line11")
    assert t.turns[3].meta == {"role": "developer", "recorded_before_results": True}


def test_a_turn_that_ends_without_the_outputs_lets_what_waited_follow_the_calls():
    t = codex.parse(rollout(user("go"), call("c1", "{}"), developer("<note>"),
                            ("event_msg", {"type": "task_complete"}), user("again")), "r.jsonl")
    assert [(x.key, x.parent) for x in t.turns] == [
        ("line2", "root"), ("line3", "line2"), ("line4", "line3"), ("line6", "line4")]


def test_follow_holds_back_what_waits_for_outputs_still_to_come():
    waiting = codex.parse(rollout(user("go"), call("c1", "{}"), developer("<note>")),
                          "r.jsonl")
    assert [x.key for x in waiting.turns] == ["line2", "line3", "line4"]
    held = without_open_tail(waiting, quiet=True)
    assert held.head == "line2" and [x.key for x in held.turns] == ["line2"]


def compacted(*history, message=""):
    return ("compacted", {"message": message, "replacement_history": [p for _, p in history]})


def test_a_compaction_at_the_start_of_the_file_is_its_history_as_turns():
    t = codex.parse(rollout(compacted(developer("<perms>"), user("earlier"), reply("done")),
                            user("next")), "r.jsonl")
    assert not t.compactions
    assert [(x.key, x.role, x.parent) for x in t.turns] == [
        ("line2.1", "user", "root"), ("line2.2", "user", "line2.1"),
        ("line2.3", "assistant", "line2.2"), ("line3", "user", "line2.3")]
    assert t.turns[0].meta == {"role": "developer", "replacement_history": "line2"}


def test_a_history_opening_with_a_call_leaves_the_summary_empty_and_keeps_the_pair():
    t = codex.parse(rollout(user("one"), reply("1"),
                            compacted(call("c1", "{}"), output("c1"), user("kept"))), "r.jsonl")
    (c,) = t.compactions
    assert (c.last_covered, c.compacted_head, c.text) == ("line3", "line4.3", "")
    assert [(x.key, x.role) for x in t.turns[2:]] == [
        ("line4.1", "assistant"), ("line4.2", "tool"), ("line4.3", "user")]


# --- the tools a rollout names (session_meta.dynamic_tools) --------------------------------

TOOLS_ROLLOUT = (__import__("pathlib").Path(__file__).parent.parent / "fixtures"
                 / "transcripts" / "codex"
                 / "rollout-2026-03-02T10-00-00-019cb0a1-tools.jsonl")


def refusing_close_ticket(text: str) -> str:
    """The rollout with close_ticket's schema one JSON Schema refuses."""
    assert text.count('"minLength": 1') == 1
    return text.replace('"minLength": 1', '"minLength": "short"')


def with_meta(meta: dict, *items) -> str:
    lines = rollout(*items).splitlines(keepends=True)
    first = json.loads(lines[0])
    first["payload"].update(meta)
    return json.dumps(first) + "\n" + "".join(lines[1:])


def _document(text: str, strict: bool = False):
    from service.model.validate import Limits
    from service.transcripts.document import document
    from service.transcripts.model import Mode

    mode = Mode(strict)
    return document(codex.parse(text, "r.jsonl", mode), "acme", Limits(), mode=mode), mode


def test_dynamic_tools_of_every_shape_codex_wrote_are_the_named_tools():
    """Typed functions, a namespace's functions in its place (the namespace no tool), the
    untyped shape of older versions; `inputSchema` (camelCase) and the other spellings."""
    from service.transcripts.model import Mode

    t = codex.parse(TOOLS_ROLLOUT.read_text(), TOOLS_ROLLOUT.name, Mode())
    assert t.tools is not None and t.tools.line == 1
    assert t.tools.at.isoformat() == "2026-03-02T10:00:01+00:00"
    assert [d["name"] for d in t.tools.definitions] == [
        "lookup_ticket", "post_reply", "close_ticket", "add_note"]
    _, mode = _document(TOOLS_ROLLOUT.read_text())
    assert mode.degraded == []
    assert t.tools.definitions[1] == {
        "name": "post_reply", "description": "Post a reply on a ticket.",
        "input_schema": {"type": "object", "properties": {"ticket_id": {"type": "string"},
                                                          "text": {"type": "string"}},
                         "required": ["ticket_id", "text"]}}
    schema = {"type": "object", "properties": {}}
    other = codex.parse(with_meta({"dynamic_tools": [
        {"name": "a", "description": "", "input_schema": schema},
        {"type": "function", "name": "b.c", "parameters": schema}, "junk"]},
        user("hi"), reply("hello")), "r.jsonl")
    assert other.tools.definitions == (
        {"name": "a", "description": None, "input_schema": schema},
        {"name": "b_c", "description": None, "input_schema": schema}, "junk")


def test_a_rollout_naming_no_tools_names_none():
    plain = rollout(user("hi"), reply("hello"))
    assert codex.parse(plain, "r.jsonl").tools is None
    assert codex.parse(with_meta({"dynamic_tools": []}, user("hi"), reply("hello")),
                       "r.jsonl").tools is None
    document, _ = _document(plain)
    assert "tool_set_versions" not in document and "tool_sets" not in document
    assert "tools_sha256" not in json.loads(document["session"]["properties"]["source"])


def test_the_tools_are_one_session_wide_version_and_a_refused_one_is_degraded():
    import hashlib

    from service.model.models import tools_json
    from service.transcripts.model import DegradedKind
    from service.turns.requests import Tool

    document, mode = _document(refusing_close_ticket(TOOLS_ROLLOUT.read_text()))
    (degraded,) = mode.degraded
    assert (degraded.line, degraded.kind) == (1, DegradedKind.INVALID_TOOL)
    assert degraded.reason == (
        "tool 'close_ticket': input_schema.properties.reason.minLength is not valid JSON "
        "Schema: 'short' is not of type 'integer'; left out of the session's tools")
    (tool_set,) = document["tool_sets"]
    offered = json.loads(tool_set["tools"])
    assert [t["name"] for t in offered] == ["lookup_ticket", "post_reply", "add_note"]
    assert tool_set["tools"] == tools_json([Tool(**t) for t in offered])  # canonical
    assert tool_set["sha256"] == hashlib.sha256(tool_set["tools"].encode()).hexdigest()
    assert document["tool_set_versions"] == [{"properties": {
        "version": 1, "tools_sha256": tool_set["sha256"],
        "created_at": {"datetime": "2026-03-02T10:00:01+00:00"}}}]
    source = json.loads(document["session"]["properties"]["source"])
    assert source["tools_sha256"] == tool_set["sha256"]


def test_strict_refuses_a_rollout_naming_a_tool_the_ledger_refuses():
    with pytest.raises(BadInput, match=r"r\.jsonl:1: tool 'close_ticket': input_schema"):
        _document(refusing_close_ticket(TOOLS_ROLLOUT.read_text()), strict=True)
    bad = with_meta({"dynamic_tools": [{"name": "x", "inputSchema": {"type": "object"}},
                                       {"name": "x", "inputSchema": {"type": "object"}},
                                       {"name": "codex_app"}, 7]}, user("hi"), reply("yo"))
    document, mode = _document(bad)
    assert [d.reason for d in mode.degraded] == [
        "tool 'x': named before; the first one is taken; left out of the session's tools",
        "tool 'codex_app': input_schema must be a JSON Schema object whose type is "
        "\"object\"; left out of the session's tools",
        "a tool entry must be an object with name and input_schema; left out of the "
        "session's tools"]
    assert [t["name"] for t in json.loads(document["tool_sets"][0]["tools"])] == ["x"]


def test_a_messages_reasoning_keeps_encrypted_content_within_its_budget():
    # One message's reasoning items keep their encrypted content verbatim up to
    # ENCRYPTED_KEPT characters together; an item past them keeps its size.
    half = codex.ENCRYPTED_KEPT // 2
    items = [("response_item", {"type": "reasoning", "summary": [], "encrypted_content": c})
             for c in ("a" * half, "b" * (half + 1), "c" * (half - 1))]
    t = codex.parse(rollout(user("go"), *items, reply("done")), "r.jsonl")
    assert t.turns[1].meta["reasoning"] == [
        {"summary": [], "encrypted_content": "a" * half},
        {"summary": [], "encrypted_content_chars": half + 1},
        {"summary": [], "encrypted_content": "c" * (half - 1)}]
