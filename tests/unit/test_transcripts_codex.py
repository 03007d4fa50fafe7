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
